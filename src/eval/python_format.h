// Python number formatting that SimulEval's outputs depend on: float repr (json.dumps, pandas
// to_csv), round(x, n) on binary floats, statistics.mean, and pandas' DataFrame.to_string cells.
// A value remembers whether Python would hold it as int or float, since 3 and 3.0 print differently.
#pragma once

#include <string>
#include <vector>

namespace gpstream::eval {

// A Python number: an int (is_int, value integral) or a float.
struct PyNumber {
  double value = 0.0;
  bool is_int = false;
};

// repr(float): shortest round-trip digits; fixed notation for 1e-4 <= |x| < 1e16, else "1e-05"/"1e+16".
std::string python_float_repr(double x);
// repr() of a PyNumber ("3" or "3.0").
std::string python_repr(const PyNumber& x);
// round(x, ndigits) for floats: rounds the exact binary value half-to-even (2.0625 → 2.062); ints unchanged.
double python_round(double x, int ndigits);
PyNumber python_round(const PyNumber& x, int ndigits);
// statistics.mean: exact mean; all-int input gives an int when the mean is integral.
PyNumber python_mean(const std::vector<PyNumber>& xs);
// One value as pandas 1.5 DataFrame.to_string(index=False) prints it (display.precision 6).
std::string pandas_cell(const PyNumber& x);

}  // namespace gpstream::eval
