// The two-replica deployment of docs/deployment.md, run on loopback: two `gpstream serve` processes behind
// nginx configured from deploy/nginx-gpstream.conf (TLS at the proxy with a throwaway self-signed
// certificate). Streams opened through the proxy are spread over both replicas and stay on theirs; SIGTERM to
// one replica mid-stream gives its streams their last words and a 1001 close, the other replica's streams go
// on untouched, and new streams reach the survivor. Skipped, with the reason, where nginx or openssl is not
// found ($GPSTREAM_NGINX, else /usr/sbin/nginx; scripts/test unpacks Debian's package without installing it,
// which would start a system nginx on port 80).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "../testing/run_command.h"
#include "../testing/temp_dir.h"
#include "serve_process.h"
#include "serve_test_client.h"

namespace gpstream {
namespace {

using nlohmann::json;
using testing::eventually;
using testing::read_file;
using testing::ServeProcess;
using testing::WsClient;
namespace http = testing::http;

// The nginx binary: $GPSTREAM_NGINX (scripts/test sets it to Debian's nginx unpacked, not installed, into
// build-test/nginx/), else an installed one.
std::string nginx_binary() {
  const char* env = std::getenv("GPSTREAM_NGINX");
  return env && *env ? env : "/usr/sbin/nginx";
}
const std::string kTemplate = std::string(GPSTREAM_SOURCE_DIR) + "/deploy/nginx-gpstream.conf";
// Every word complete; the second sentence unfinished (the drain finishes it).
const std::string kText = "The cat sat on the mat. I would like a cup of ";

// A port nothing listens on now (bound and released; the test binds it again at once).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// The open session count in GET /health, or -1 while nothing answers there (not yet listening).
int open_sessions(int port) {
  try {
    const testing::HttpReply r = testing::http_request(port, http::verb::get, "/health");
    return r.status == 200 ? json::parse(r.body).value("sessions", -1) : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

// nginx in the foreground on the filled-in template; stopped (QUIT, then KILL) when the object goes.
class Nginx {
 public:
  Nginx(const testing::TempDir& dir, const std::map<std::string, std::string>& values)
      : dir_(dir.file("nginx")) {
    std::filesystem::create_directories(dir_);
    std::string conf = read_file(kTemplate);
    for (const auto& [name, value] : values)
      conf = std::regex_replace(conf, std::regex("@" + name + "@"), value);
    conf = std::regex_replace(conf, std::regex("@RUN_DIR@"), dir_);
    std::ofstream(dir_ + "/nginx.conf") << conf;
    const std::string line = "exec " + nginx_binary() + " -p " + dir_ + " -c " + dir_ + "/nginx.conf -e " +
                             dir_ + "/error.log -g 'daemon off;'";
    std::string sh = "/bin/sh", dash_c = "-c";
    char* argv[] = {sh.data(), dash_c.data(), const_cast<char*>(line.c_str()), nullptr};
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv, environ) != 0) pid_ = -1;
  }
  ~Nginx() {
    if (pid_ <= 0) return;
    kill(pid_, SIGQUIT);
    if (!eventually([&] { return waitpid(pid_, nullptr, WNOHANG) == pid_; }, 10)) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string errors() const { return read_file(dir_ + "/error.log"); }

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

// The words of kText on a stream that ends with "end", straight from a replica: what every stream should get.
std::vector<std::string> words_for_text(int port) {
  WsClient c(port);
  c.send(R"({"type": "start"})");
  c.send(json{{"type", "source"}, {"text", kText}}.dump());
  c.send(R"({"type": "end"})");
  std::vector<std::string> words;
  for (const json& m : c.read_all())
    if (m["type"] == "word") words.push_back(m["word"]);
  return words;
}

struct StreamEnd {
  std::vector<std::string> words;
  std::string last_type;
  int close_code = 0;
};

StreamEnd read_to_close(WsClient& c) {
  StreamEnd e;
  for (const json& m : c.read_all()) {
    if (m["type"] == "word") e.words.push_back(m["word"]);
    e.last_type = m["type"];
  }
  e.close_code = c.close_code();
  return e;
}

TEST(NginxDeployment, TwoReplicasBehindTlsSurviveOneDraining) {
  if (!std::filesystem::exists(testing::kGpstream)) GTEST_SKIP() << "gpstream is not built";
  if (!std::filesystem::exists(nginx_binary()))
    GTEST_SKIP() << "no nginx at " << nginx_binary()
                 << " (scripts/test fetches Debian's into build-test/nginx/ and sets GPSTREAM_NGINX)";
  if (testing::run_command("command -v openssl >/dev/null").code != 0)
    GTEST_SKIP() << "openssl is not installed";
  testing::TempDir dir;
  const std::string cert = dir.file("cert.pem"), key = dir.file("key.pem");
  ASSERT_EQ(
      testing::run_command("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
                           key + " -out " + cert + " >/dev/null 2>&1")
          .code,
      0);

  ServeProcess replica1(dir, "--drain-seconds 60", 0, "replica1");
  ServeProcess replica2(dir, "--drain-seconds 60", 0, "replica2");
  const int port1 = replica1.wait_for_port(), port2 = replica2.wait_for_port();
  ASSERT_GT(port1, 0) << replica1.err();
  ASSERT_GT(port2, 0) << replica2.err();
  const int http_port = free_port(), https_port = free_port();
  Nginx nginx(dir, {{"REPLICA_1", "127.0.0.1:" + std::to_string(port1)},
                    {"REPLICA_2", "127.0.0.1:" + std::to_string(port2)},
                    {"HTTP_LISTEN", "127.0.0.1:" + std::to_string(http_port)},
                    {"HTTPS_LISTEN", "127.0.0.1:" + std::to_string(https_port)},
                    {"TLS_CERT", cert},
                    {"TLS_KEY", key}});
  ASSERT_TRUE(eventually([&] { return open_sessions(http_port) >= 0; }, 30)) << nginx.errors();

  // TLS ends at the proxy: /health over HTTPS, and a translation request.
  const std::string https = "https://127.0.0.1:" + std::to_string(https_port);
  const auto health = testing::run_command("curl -sk " + https + "/health");
  ASSERT_EQ(health.code, 0);
  EXPECT_EQ(json::parse(health.out).value("status", ""), "ok") << health.out;
  const auto translated = testing::run_command(
      "curl -sk -X POST -H 'Content-Type: application/json' --data '{\"text\": \"The cat sat on the "
      "mat.\"}' " +
      https + "/v1/translate");
  ASSERT_EQ(translated.code, 0);
  EXPECT_FALSE(json::parse(translated.out).value("translation", "").empty()) << translated.out;

  const std::vector<std::string> want = words_for_text(port2);
  ASSERT_FALSE(want.empty());

  // Four streams through the proxy; each replica's /health (asked directly) tells where each one landed.
  std::vector<std::unique_ptr<WsClient>> streams;
  std::vector<int> replica_of;
  for (int i = 0; i < 4; ++i) {
    const int before1 = open_sessions(port1);
    streams.push_back(std::make_unique<WsClient>(http_port));
    ASSERT_TRUE(streams.back()->send(R"({"type": "start"})"));
    ASSERT_EQ((*streams.back()->read_json())["type"], "ready");
    replica_of.push_back(open_sessions(port1) > before1 ? 1 : 2);
  }
  ASSERT_NE(std::count(replica_of.begin(), replica_of.end(), 1), 0) << "no stream reached replica 1";
  ASSERT_NE(std::count(replica_of.begin(), replica_of.end(), 2), 0) << "no stream reached replica 2";
  // The source reaches both replicas before the signal: a draining replica takes no more messages.
  const int64_t before1 = testing::source_words_metric(port1), before2 = testing::source_words_metric(port2);
  for (auto& s : streams) ASSERT_TRUE(s->send(json{{"type", "source"}, {"text", kText}}.dump()));
  const int64_t per_stream = static_cast<int64_t>(testing::word_count(kText));
  const auto on = [&](int replica) { return std::count(replica_of.begin(), replica_of.end(), replica); };
  ASSERT_TRUE(eventually([&] {
    return testing::source_words_metric(port1) == before1 + on(1) * per_stream &&
           testing::source_words_metric(port2) == before2 + on(2) * per_stream;
  }));

  // Replica 1 drains: its streams get their last words, then 1001; it exits 0.
  std::thread terminate([&] { EXPECT_EQ(replica1.signal_and_wait(SIGTERM), 0) << replica1.err(); });
  for (size_t i = 0; i < streams.size(); ++i) {
    if (replica_of[i] != 1) continue;
    const StreamEnd e = read_to_close(*streams[i]);
    EXPECT_EQ(e.words, want) << "stream " << i;
    EXPECT_EQ(e.last_type, "finished") << "stream " << i;
    EXPECT_EQ(e.close_code, 1001) << "stream " << i;
  }
  terminate.join();

  // Replica 2's streams are untouched: they end normally with every word.
  for (size_t i = 0; i < streams.size(); ++i) {
    if (replica_of[i] != 2) continue;
    ASSERT_TRUE(streams[i]->send(R"({"type": "end"})"));
    const StreamEnd e = read_to_close(*streams[i]);
    EXPECT_EQ(e.words, want) << "stream " << i;
    EXPECT_EQ(e.close_code, 1000) << "stream " << i;
  }

  // New streams go to the survivor, over plain HTTP and through the proxy's retries.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(words_for_text(http_port), want) << "new stream " << i;
  EXPECT_EQ(open_sessions(port2), 0);
}

}  // namespace
}  // namespace gpstream
