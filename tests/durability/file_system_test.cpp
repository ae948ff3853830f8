// The POSIX file system: basic operations, errors that name the path, and the lock file
// (a second lock in this process or in another process fails until the first is released).
#include "base/file_system.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_matchers.hpp"
#include "support/fault_file_system.hpp"
#include "temp_dir.hpp"
#include <sys/wait.h>
#include <unistd.h>

namespace base = strata::base;
using strata::ErrorCode;
using strata::testing::TempDir;
using strata::testing::ThrowsCode;
using strata::testing::ThrowsCodeWith;

namespace {

TEST(PosixFileSystem, WriteReadRenameRemoveAndList) {
  TempDir dir;
  auto& fs = base::default_file_system();
  const auto a = dir.path() / "a";
  {
    auto file = fs.open_writable(a, base::OpenMode::truncate);
    file->append("hello ");
    file->append("world");
    file->sync();
    EXPECT_EQ(file->size(), 11u);
    file->close();
  }
  {
    auto file = fs.open_writable(a, base::OpenMode::append);
    EXPECT_EQ(file->size(), 11u);
    file->append("!");
    file->close();
  }
  auto reader = fs.open_readable(a);
  EXPECT_EQ(reader->read_all(), "hello world!");
  EXPECT_EQ(reader->read(6, 100), "world!");
  EXPECT_EQ(reader->read(50, 1), "");
  char buffer[8] = {'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x'};
  EXPECT_EQ(reader->read_into(6, buffer), 6u);  // to the end of the file only
  EXPECT_EQ(std::string_view(buffer, 8), "world!xx");
  EXPECT_EQ(reader->read_into(0, {buffer, 5}), 5u);
  EXPECT_EQ(std::string_view(buffer, 8), "hello!xx");
  EXPECT_EQ(reader->read_into(12, buffer), 0u);
  fs.truncate(a, 5);
  EXPECT_EQ(fs.file_size(a), 5u);
  fs.rename(a, dir.path() / "b");
  fs.sync_dir(dir.path());
  EXPECT_FALSE(fs.exists(a));
  fs.create_dir(dir.path() / "sub" / "deeper");
  fs.create_dir(dir.path() / "sub");  // Already there: fine.
  // With a trailing separator and a relative path (each new directory's parent is synced:
  // not observable here, but every path form must still work).
  fs.create_dir(dir.path() / "sub" / "a" / "b" / "");
  EXPECT_TRUE(fs.exists(dir.path() / "sub" / "a" / "b"));
  const std::filesystem::path relative = std::filesystem::relative(dir.path() / "sub" / "c" / "d");
  fs.create_dir(relative);
  EXPECT_TRUE(fs.exists(dir.path() / "sub" / "c" / "d"));
  EXPECT_EQ(fs.list(dir.path() / "sub"), (std::vector<std::string>{"a", "c", "deeper"}));
  EXPECT_EQ(fs.list(dir.path()), (std::vector<std::string>{"b", "sub"}));
  fs.remove(dir.path() / "b");
  EXPECT_EQ(fs.list(dir.path()), std::vector<std::string>{"sub"});
}

// grow_ahead: the file is longer on disk than what was appended, by zeros, in whole steps,
// until close() cuts it back; a file opened to append ignores it.
TEST(PosixFileSystem, GrowAheadKeepsZerosPastTheAppendsUntilClose) {
  TempDir dir;
  auto& fs = base::default_file_system();
  const auto a = dir.path() / "a";
  auto file = fs.open_writable(a, base::OpenMode::truncate);
  file->grow_ahead(4096);
  file->append("abc");
  EXPECT_EQ(file->size(), 3u);
  EXPECT_EQ(fs.file_size(a), 4096u);
  EXPECT_EQ(fs.open_readable(a)->read_all(), "abc" + std::string(4093, '\0'));
  const std::string more(5000, 'x');
  file->append(more);
  file->sync();
  EXPECT_EQ(file->size(), 5003u);
  EXPECT_EQ(fs.file_size(a), 8192u);  // the multiple of the step that holds 5003 bytes
  file->close();
  EXPECT_EQ(fs.file_size(a), 5003u);
  EXPECT_EQ(fs.open_readable(a)->read_all(), "abc" + more);

  auto appending = fs.open_writable(a, base::OpenMode::append);
  appending->grow_ahead(4096);
  appending->append("!");
  EXPECT_EQ(fs.file_size(a), 5004u);
  appending->close();
  EXPECT_EQ(fs.open_readable(a)->read_all(), "abc" + more + "!");
}

TEST(PosixFileSystem, FailuresAreIoErrorsNamingThePath) {
  TempDir dir;
  auto& fs = base::default_file_system();
  const auto missing = dir.path() / "missing";
  EXPECT_THAT([&] { fs.open_readable(missing); },
              ThrowsCodeWith(ErrorCode::io_error, missing.string() + ": No such file"));
  EXPECT_THAT([&] { fs.remove(missing); }, ThrowsCodeWith(ErrorCode::io_error, "unlink"));
  EXPECT_THAT([&] { fs.list(missing); }, ThrowsCode(ErrorCode::io_error));
  EXPECT_THAT([&] { fs.file_size(missing); }, ThrowsCode(ErrorCode::io_error));
  EXPECT_FALSE(fs.exists(missing));
}

// create_dir fails as the other operations do, with io_error naming the path, also where
// the first call that fails is a stat of a parent (here: a name too long; likewise a
// parent the process may not search).
TEST(PosixFileSystem, CreateDirFailuresAreIoErrors) {
  TempDir dir;
  auto& fs = base::default_file_system();
  const auto too_long = dir.path() / std::string(300, 'a');
  EXPECT_THAT([&] { fs.create_dir(too_long / "db"); },
              ThrowsCodeWith(ErrorCode::io_error, "File name too long"));
  EXPECT_THAT([&] { fs.create_dir(too_long); }, ThrowsCode(ErrorCode::io_error));
  const auto file = dir.path() / "file";
  fs.open_writable(file, base::OpenMode::truncate)->close();
  EXPECT_THAT([&] { fs.create_dir(file / "db"); }, ThrowsCode(ErrorCode::io_error));
}

TEST(PosixFileSystem, SecondLockInTheSameProcessFailsUntilReleased) {
  TempDir dir;
  auto& fs = base::default_file_system();
  const auto lock_path = dir.path() / "LOCK";
  {
    auto lock = fs.lock(lock_path);
    EXPECT_THAT([&] { fs.lock(lock_path); },
                ThrowsCodeWith(ErrorCode::database_locked, lock_path.string()));
    // The same file through another spelling of the path.
    EXPECT_THAT([&] { fs.lock(dir.path() / "." / "LOCK"); },
                ThrowsCode(ErrorCode::database_locked));
  }
  auto again = fs.lock(lock_path);
  EXPECT_NE(again, nullptr);
}

TEST(PosixFileSystem, LockHeldByAnotherProcessFails) {
  TempDir dir;
  auto& fs = base::default_file_system();
  const auto lock_path = dir.path() / "LOCK";
  auto lock = fs.lock(lock_path);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A separate process has an empty registry: only flock can stop it.
    int code = 3;
    try {
      auto second = fs.lock(lock_path);
      code = 1;
    } catch (const strata::Error& e) {
      code = e.error_code() == ErrorCode::database_locked ? 0 : 2;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the other process must see database_locked";
}

TEST(FaultFileSystem, LockAndCrashModel) {
  strata::testing::FaultFileSystem fs;
  fs.create_dir("/d");
  {
    auto lock = fs.lock("/d/LOCK");
    EXPECT_THAT([&] { fs.lock("/d/LOCK"); }, ThrowsCode(ErrorCode::database_locked));
  }
  auto lock = fs.lock("/d/LOCK");
  auto file = fs.open_writable("/d/f", base::OpenMode::truncate);
  file->append("abc");
  file->sync();
  file->append("def");
  fs.drop_unsynced();  // /d/f was never made durable in its directory.
  EXPECT_FALSE(fs.exists("/d/f"));
  auto g = fs.open_writable("/d/g", base::OpenMode::truncate);
  g->append("abc");
  g->sync();
  fs.sync_dir("/d");
  g->append("def");
  fs.drop_unsynced();
  EXPECT_EQ(fs.contents("/d/g"), "abc");
  EXPECT_THAT([&] { g->append("x"); }, ThrowsCode(ErrorCode::io_error));
}

}  // namespace
