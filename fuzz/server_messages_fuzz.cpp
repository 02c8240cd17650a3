// Fuzz target: what the server parses from a socket. The first byte picks the parser, the rest is the
// message: 0 a /v1/stream WebSocket text frame, 1 a POST /v1/translate body, 2 a SimulEval PUT /input
// segment.
#include "fuzz_input.h"
#include "serve/simuleval_agent.h"
#include "serve/stream_protocol.h"
#include "serve/translate_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view message = gpstream::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      (void)gpstream::serve::parse_client_message(message);
      break;
    case 1:
      (void)gpstream::serve::parse_translate_request(message, 64);
      break;
    default:
      (void)gpstream::serve::parse_simuleval_segment(message);
      break;
  }
  return 0;
}
