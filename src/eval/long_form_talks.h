// Long-form evaluation runs (`gpstream eval --long-form`): the test set's sentences, in order, concatenated
// into talks of at least a given length at a speaking pace, each talk translated as one unsegmented stream by
// one continuous Session (stream/session.h; no boundary is given to it), and the result kept as a LongFormRun
// (eval/long_form.h) to score. Optionally the source is stripped of punctuation first, as live ASR output
// comes. The definitions are in docs/evaluation.md ("Long-form evaluation").
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "eval/long_form.h"
#include "eval/simultaneous.h"

namespace gpstream::eval {

// `text` with the punctuation taken off every word's ends: the leading and trailing code points that are not
// letters, marks or digits (Unicode L*, M*, N*) are removed, and a word left empty is dropped. Inner
// characters stay ("don't", "e-mail", "Ctrl+F"), so do case and everything else. Words are split as the
// Session splits them (tokenizer::split_words) and joined by one space.
std::string strip_punctuation(std::string_view text);

// Consecutive sentences grouped into talks: sentences are added to a talk until it lasts at least
// min_minutes at pace_words_per_s (its source words / pace); a last talk shorter than that joins the one
// before it. Pairs whose source or reference has no word are left out (counted in `skipped`).
struct Talks {
  std::vector<std::vector<TestPair>> talks;
  size_t skipped = 0;
};
Talks build_talks(const std::vector<TestPair>& pairs, double min_minutes, double pace_words_per_s);

// Translates one talk as one stream, paced at pace_words_per_s (> 0): its words are pushed one at a time as
// the session asks for them, with SimulEval's virtual clock (eval/simultaneous.h). The run has word units:
// each sentence's source_length is its source words and source_ms their duration at the pace; each
// hypothesis word's delay is the stream's source words read when it was written, its elapsed time the
// virtual clock's ms. Fails, naming the first word, if the session left any source word unread.
// progress(words read, words in the talk) as the talk advances.
Result<LongFormRun> translate_talk(model::ForwardModel& model, const stream::SegmentCodec& codec,
                                   const stream::SessionOptions& session_options,
                                   const std::vector<TestPair>& talk, double pace_words_per_s,
                                   const std::function<void(size_t, size_t)>& progress = {});

}  // namespace gpstream::eval
