// Paradigms (gpe.md §6): how source and target rows are positioned and what each row sees. Every
// paradigm runs through the same Session loop and policy; they differ only in the rules below, so the
// table of gpe.md §6 is this file.
//
// clang-format off
// | paradigm            | target position       | source row sees   | target row sees              | on a read                     |
// |---------------------|-----------------------|-------------------|------------------------------|-------------------------------|
// | offline             | φ + i (φ = S classic) | earlier source    | all source, earlier tgt      | — (reads everything first)    |
// | group (GPE)         | φ + i                 | earlier source    | g source, earlier tgt        | append                        |
// | batch-stream        | S(u at feed) + i      | earlier source    | g source, earlier tgt        | append                        |
// | reencode-pos        | S(now) + i            | earlier source    | g source, earlier tgt        | re-rotate target keys         |
// | reencode            | S(now) + i            | earlier source    | all read, earlier tgt        | recompute every target row    |
// | interleaved         | arrival index         | every earlier row | every earlier row            | append                        |
// | interleaved-blocked | arrival index         | earlier source    | every earlier row            | append                        |
// clang-format on
//
// Positions removed (the paper's Table 2 ablation): every row of the removed group(s) at position 0,
// whatever the paradigm says, in training and inference alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/kv_cache.h"
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

// Which groups lose their positions (every such row at position 0).
enum class PositionsRemoved { None, Source, Target, All };

std::optional<PositionsRemoved> parse_positions_removed(std::string_view name);  // none, source, target, all
const char* positions_removed_name(PositionsRemoved r);

// A row's position once the removal applies: 0 for a removed group, else `pos`.
inline float kept_position(PositionsRemoved r, model::Group g, float pos) {
  const bool removed = r == PositionsRemoved::All ||
                       (r == PositionsRemoved::Source && g == model::Group::Source) ||
                       (r == PositionsRemoved::Target && g == model::Group::Target);
  return removed ? 0.0f : pos;
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
