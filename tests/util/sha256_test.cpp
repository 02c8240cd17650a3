// SHA-256 against the published FIPS 180-2 example vectors (appendix B: "abc", the 448-bit message, one
// million 'a'), against the hash of the empty message, and against `sha256sum` (GNU coreutils) on files whose
// lengths straddle the padding boundaries, hashed whole and in odd-sized pieces.
#include "util/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "../testing/run_command.h"

namespace gpstream {
namespace {

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, PiecesHashLikeTheWhole) {
  const std::string a(1000000, 'a');
  Sha256 h;
  size_t at = 0;
  for (size_t piece = 1; at < a.size(); piece = piece * 7 % 997 + 1) {
    const size_t n = std::min(piece, a.size() - at);
    h.update(a.data() + at, n);
    at += n;
  }
  EXPECT_EQ(to_hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  h.update("abc");  // finish() starts over
  EXPECT_EQ(to_hex(h.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

using testing::sha256sum_of;

TEST(Sha256, FilesMatchSha256sum) {
  const std::string dir = std::string(GPSTREAM_BINARY_DIR) + "/sha256_test_tmp/" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  uint64_t x = 12345;
  for (size_t len : {0, 1, 55, 56, 63, 64, 65, 119, 120, 1000003, 2200001}) {
    const std::string path = dir + "/f" + std::to_string(len) + ".bin";
    std::string bytes(len, '\0');
    for (char& c : bytes) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      c = static_cast<char>(x >> 56);
    }
    std::ofstream(path, std::ios::binary) << bytes;
    const std::string expected = sha256sum_of(path);
    ASSERT_EQ(expected.size(), 64u) << "sha256sum gave '" << expected << "'";
    auto got = sha256_file_hex(path);
    ASSERT_TRUE(got.ok()) << got.error().message();
    EXPECT_EQ(*got, expected) << len << " bytes";
    EXPECT_EQ(sha256_hex(bytes), expected) << len << " bytes";
  }
  auto missing = sha256_file_hex(dir + "/none.bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("none.bin"), std::string::npos) << missing.error().message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpstream
