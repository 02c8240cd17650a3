// A GoogleTest fixture for tests that run a Server on loopback over the shipped En→Fr model: the model loaded
// once per suite, a server started per test on a free port with the repository's demo page.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "serve/server.h"
#include "stream/streaming_model.h"

namespace gpstream::serve {

class ShippedModelServerTest : public ::testing::Test {
 protected:
  static inline const std::string kModelDir = std::string(GPSTREAM_SOURCE_DIR) + "/models/gpstream-en-fr";

  static void SetUpTestSuite() {
    auto m = stream::StreamingModel::load(kModelDir, 1);
    ASSERT_TRUE(m.ok()) << m.error().message();
    model_ = std::make_unique<stream::StreamingModel>(std::move(*m));
  }
  static void TearDownTestSuite() { model_.reset(); }

  // Starts a server (replacing any running one) with `so` as every stream's session options, on a free port.
  void start_server(ServerOptions o, const stream::SessionOptions& so) {
    server_.reset();
    o.port = 0;
    if (o.web_root.empty()) o.web_root = std::string(GPSTREAM_SOURCE_DIR) + "/web";
    auto s = Server::start(*model_, so, o);
    ASSERT_TRUE(s.ok()) << s.error().message();
    server_ = std::move(*s);
    port_ = server_->port();
  }

  static inline std::unique_ptr<stream::StreamingModel> model_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace gpstream::serve
