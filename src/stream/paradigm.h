// Paradigms (gpe.md §6): how source and target rows are positioned and what each row sees. Every
// paradigm runs through the same Session loop and policy; they differ only in the rules below, so the
// table of gpe.md §6 is this file.
//
// | paradigm            | target position          | source row sees      | target row sees        | on a
// read                     | | offline             | φ + i (φ = S classic)    | earlier source       | all
// source, earlier tgt| — (reads everything first)    | | group (GPE)         | φ + i                    |
// earlier source       | g source, earlier tgt  | append                        | | batch-stream        | S(u
// at feed) + i         | earlier source       | g source, earlier tgt  | append                        | |
// reencode-pos        | S(now) + i               | earlier source       | g source, earlier tgt  | re-rotate
// target keys         | | reencode            | S(now) + i               | earlier source       | all read,
// earlier tgt  | recompute every target row    | | interleaved         | arrival index            | every
// earlier row    | every earlier row      | append                        | | interleaved-blocked | arrival
// index            | earlier source only  | every earlier row      | append                        |
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "util/error.h"

namespace gpstream {
class JsonValue;  // util/json_reader.h
}  // namespace gpstream

namespace gpstream::stream {

enum class Paradigm { Offline, Group, BatchStream, ReencodePos, Reencode, Interleaved, InterleavedBlocked };

std::optional<Paradigm> parse_paradigm(std::string_view name);
const char* paradigm_name(Paradigm p);
// Every paradigm name, for help texts.
std::string paradigm_names();

// Source rows see the target rows already in the cache (interleaved only).
inline bool source_sees_target(Paradigm p) {
  return p == Paradigm::Interleaved;
}
// Positions follow arrival order over both groups.
inline bool arrival_positions(Paradigm p) {
  return p == Paradigm::Interleaved || p == Paradigm::InterleavedBlocked;
}
// Target positions restart at φ.
inline bool phi_positions(Paradigm p) {
  return p == Paradigm::Offline || p == Paradigm::Group;
}

// φ, the target group's start position: a number, or "S" = the number of source rows when the header
// is fed (classic batch positions when the whole source is read first).
struct Phi {
  float value = 0.0f;
  bool source_length = false;
  static std::optional<Phi> parse(std::string_view s);
  std::string to_string() const;
};

// φ in a config file: a JSON number >= 0 (its value as read, never re-printed and re-parsed) or a string
// Phi::parse accepts ("S", "0.5"); errors name the file and field.
Result<Phi> phi_from_json(const JsonValue& v);

}  // namespace gpstream::stream
