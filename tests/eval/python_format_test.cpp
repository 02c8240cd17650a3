// Python formatting: expected values printed by CPython 3.11 (repr, round, statistics.mean) and by
// pandas 1.5.3 (DataFrame.to_string(index=False), to_csv(sep="\t")), and metrics.md A.2's
// round(2.0625, 3) = 2.062 [ran].
#include "eval/python_format.h"

#include <gtest/gtest.h>

#include "eval/scores.h"

namespace gpstream::eval {
namespace {

TEST(PythonRepr, Floats) {
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1e-5), "1e-05");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(123456789012345.6), "123456789012345.6");
  EXPECT_EQ(python_float_repr(1.5e300), "1.5e+300");
  EXPECT_EQ(python_float_repr(2.5), "2.5");
  EXPECT_EQ(python_float_repr(100.0), "100.0");
  EXPECT_EQ(python_float_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(python_float_repr(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(5e-324), "5e-324");
  EXPECT_EQ(python_repr(PyNumber{3, true}), "3");
  EXPECT_EQ(python_repr(PyNumber{-2, true}), "-2");
}

TEST(PythonRound, HalfEvenOnBinaryValues) {
  EXPECT_EQ(python_round(2.0625, 3), 2.062);  // metrics.md A.2 [ran]
  EXPECT_EQ(python_round(2.0635, 3), 2.063);
  EXPECT_EQ(python_round(1.0005, 3), 1.0);
  EXPECT_EQ(python_round(0.0015, 3), 0.002);
  EXPECT_EQ(python_round(2.675, 2), 2.67);
  EXPECT_EQ(python_round(1666.6666666, 3), 1666.667);
}

TEST(PythonMean, IntAndFloat) {
  auto a = python_mean({{3, true}, {3, true}});
  EXPECT_TRUE(a.is_int);
  EXPECT_EQ(a.value, 3);
  auto b = python_mean({{1, true}, {2, true}});
  EXPECT_FALSE(b.is_int);
  EXPECT_EQ(b.value, 1.5);
  auto c = python_mean({{1.0, false}, {2.0, false}});
  EXPECT_FALSE(c.is_int);
  EXPECT_EQ(c.value, 1.5);
}

TEST(PandasFormat, Table) {
  NamedScores s = {{"BLEU", {48.531, false}}, {"LAAL", {3.0, false}},  {"AL", {1.667, false}},
                   {"AP", {0.88, false}},     {"DAL", {2.444, false}}, {"ATD", {2.5, false}}};
  EXPECT_EQ(format_scores_table(s), "  BLEU  LAAL    AL   AP   DAL  ATD\n48.531   3.0 1.667 0.88 2.444  2.5");
  EXPECT_EQ(format_scores_tsv(s), "BLEU\tLAAL\tAL\tAP\tDAL\tATD\n48.531\t3.0\t1.667\t0.88\t2.444\t2.5\n");
  NamedScores t = {{"BLEU", {0, true}},       {"LAAL", {1234567.891, false}}, {"StartOffset", {3, true}},
                   {"EndOffset", {-2, true}}, {"X", {12345.678, false}},      {"Z", {100.0, false}}};
  EXPECT_EQ(format_scores_table(t),
            " BLEU        LAAL  StartOffset  EndOffset         X     Z\n"
            "    0 1234567.891            3         -2 12345.678 100.0");
  EXPECT_EQ(format_scores_tsv(t),
            "BLEU\tLAAL\tStartOffset\tEndOffset\tX\tZ\n0\t1234567.891\t3\t-2\t12345.678\t100.0\n");
  NamedScores u = {{"AL", {-0.5, false}}, {"LongMetricName_CA", {1.0, false}}, {"N", {1000000.0, false}}};
  EXPECT_EQ(format_scores_table(u), "  AL  LongMetricName_CA         N\n-0.5                1.0 1000000.0");
  EXPECT_EQ(pandas_cell({1e-7, false}), "1.000000e-07");
  EXPECT_EQ(pandas_cell({0.0001, false}), "0.0001");
  // round(x, 3) before printing: 2.0625 → 2.062.
  EXPECT_EQ(format_scores_tsv({{"AL", {2.0625, false}}}), "AL\n2.062\n");
}

}  // namespace
}  // namespace gpstream::eval
