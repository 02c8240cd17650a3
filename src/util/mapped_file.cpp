// Memory-mapped or resident read-only files, whole-file reads and atomic writes.
#include "util/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "util/memory_budget.h"

namespace gpstream {

namespace {

// Reads the whole file into `buffer` (fresh huge-page-aligned memory), then makes it read-only.
Status read_resident(int fd, const std::string& path, size_t size, HugePageBuffer& buffer) {
  GPS_ASSIGN(buffer, HugePageBuffer::allocate(size, path));
  std::byte* dst = buffer.data();
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, dst + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(path + ": read failed: " + std::strerror(errno));
    if (n == 0)
      return io_error(path + ": file shrank while being read (" + std::to_string(done) + " of " +
                      std::to_string(size) + " bytes)");
    done += static_cast<size_t>(n);
  }
  buffer.make_read_only();  // weights are never written; make a stray write fault
  return {};
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

Status refuse_unless_regular(const std::string& path, mode_t mode) {
  if (S_ISREG(mode)) return {};
  return io_error(path + ": not a regular file (" + file_kind(mode) + ")");
}

}  // namespace

Result<int> open_regular_file(const std::string& path) {
  // stat first, so that a device is never opened (opening one can have effects); then open without
  // blocking (a FIFO's open waits for a writer otherwise) and check the descriptor itself, in case the path
  // was replaced in between.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  GPS_TRY(refuse_unless_regular(path, st.st_mode));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return io_error(path + ": cannot open: " + std::strerror(errno));
  auto fail = [&](Error e) {
    ::close(fd);
    return e;
  };
  if (fstat(fd, &st) != 0) return fail(io_error(path + ": cannot stat: " + std::strerror(errno)));
  if (Status regular = refuse_unless_regular(path, st.st_mode); !regular.ok()) return fail(regular.error());
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return fail(io_error(path + ": cannot open: " + std::strerror(errno)));
  return fd;
}

Result<std::string> read_regular_text_file(const std::string& path, size_t limit) {
  GPS_ASSIGN(int fd, open_regular_file(path));
  std::string out;
  char buf[1 << 16];
  while (out.size() <= limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return io_error(path + ": read failed: " + std::strerror(e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string& path, Residency residency) {
  GPS_ASSIGN(int fd, open_regular_file(path));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return io_error(path + ": cannot stat: " + std::strerror(e));
  }
  auto file = std::shared_ptr<MappedFile>(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  file->residency_ = residency;
  if (file->size_ > 0 && residency == Residency::Resident) {
    Status budget = check_memory_budget(file->size_,
                                        "reading " + path + " into memory (GPSTREAM_MMAP=1 maps it instead)");
    if (!budget.ok()) {
      ::close(fd);
      return budget.error();
    }
    Status s = read_resident(fd, path, file->size_, file->resident_);
    ::close(fd);
    if (!s.ok()) return s.error();
    file->data_ = file->resident_.data();
    return file;
  }
  if (file->size_ > 0) {
    void* p = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      return io_error(path + ": mmap failed: " + std::strerror(e));
    }
    file->mapping_ = p;
    file->data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);
  return file;
}

Residency default_weight_residency() {
  const char* v = std::getenv("GPSTREAM_MMAP");
  return v && std::string_view(v) == "1" ? Residency::Mapped : Residency::Resident;
}

MappedFile::~MappedFile() {
  if (mapping_) munmap(mapping_, size_);
}

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return io_error(path + ": read error");
  return ss.str();
}

Status write_file_atomic(const std::string& path, std::span<const std::byte> bytes) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(tmp + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return io_error(tmp + ": write failed: " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return io_error(tmp + ": fsync/close failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return io_error(path + ": rename failed: " + std::strerror(e));
  }
  return {};
}

}  // namespace gpstream
