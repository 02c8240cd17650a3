// Library version string.
namespace gpstream {
const char* version() { return "0.1.0"; }
}  // namespace gpstream
