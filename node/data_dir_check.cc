#include "node/data_dir_check.h"

#include <pwd.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mesh::node {
namespace {

constexpr const char* kStoreFiles[] = {"data.mdb", "lock.mdb"};

std::string user_name(uid_t uid) {
  const passwd* entry = ::getpwuid(uid);
  return entry != nullptr ? std::string(entry->pw_name) : std::to_string(uid);
}

std::string group_name(gid_t gid) {
  const group* entry = ::getgrgid(gid);
  return entry != nullptr ? std::string(entry->gr_name) : std::to_string(gid);
}

std::string who(uid_t uid) { return user_name(uid) + " (uid " + std::to_string(uid) + ")"; }

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// What hands `dir` and its files to the user meshnode runs as.
std::string chown_command(const std::string& dir) {
  return "`chown -R " + user_name(::geteuid()) + ":" + group_name(::getegid()) + " " + dir + "`";
}

}  // namespace

Result<std::string, DataDirError> check_data_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return make_error(DataDirError::missing,
                        "data dir '" + dir + "' does not exist (create it, mode 0700, owned by the user meshnode "
                        "runs as: `install -d -m 0700 -o " + user_name(::geteuid()) + " " + dir + "`)");
    }
    return make_error(DataDirError::unreadable, "data dir '" + dir + "': " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return make_error(DataDirError::not_directory, "data dir '" + dir + "' is not a directory");
  const uid_t self = ::geteuid();
  if (self == 0 && st.st_uid != 0) {
    return make_error(DataDirError::root_in_users_dir,
                      "data dir '" + dir + "' is owned by " + who(st.st_uid) +
                          ", and meshnode runs as root: the files it would write there would be root's, and " +
                          user_name(st.st_uid) + "'s next start would fail on them (Permission denied); run meshnode as " +
                          user_name(st.st_uid) + " (systemctl start meshnode, or sudo -u " + user_name(st.st_uid) +
                          " meshnode ...)");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return make_error(DataDirError::not_writable,
                      "data dir '" + dir + "' is owned by " + who(st.st_uid) + ", mode " + mode_text(st.st_mode) +
                          ", and meshnode runs as " + who(self) + ", who may not write it: run " + chown_command(dir));
  }
  for (const char* name : kStoreFiles) {
    const std::string path = dir + "/" + name;
    struct stat file {};
    if (::stat(path.c_str(), &file) != 0) continue;  // made at the first start
    if (::access(path.c_str(), R_OK | W_OK) != 0) {
      return make_error(DataDirError::not_writable,
                        "'" + path + "' is owned by " + who(file.st_uid) + ", mode " + mode_text(file.st_mode) +
                            ", and meshnode runs as " + who(self) +
                            " (was meshnode once run as another user?): run " + chown_command(dir));
    }
  }
  return "exists, writable by " + who(self);
}

Result<std::string, DataDirError> check_data_dir_for_service(const std::string& dir) {
  struct stat st {};
  if (::geteuid() != 0 || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid == 0) {
    return check_data_dir(dir);
  }
  const std::string owner = user_name(st.st_uid);
  const std::string fix = "run `chown -R " + owner + ":" + group_name(st.st_gid) + " " + dir + "`";
  if ((st.st_mode & S_IRWXU) != S_IRWXU) {
    return make_error(DataDirError::not_writable, "data dir '" + dir + "' is owned by " + who(st.st_uid) + ", mode " +
                                                      mode_text(st.st_mode) + ", which its owner may not write: " +
                                                      "run `chmod 0700 " + dir + "`");
  }
  for (const char* name : kStoreFiles) {
    const std::string path = dir + "/" + name;
    struct stat file {};
    if (::stat(path.c_str(), &file) != 0) continue;
    if (file.st_uid != st.st_uid || (file.st_mode & (S_IRUSR | S_IWUSR)) != (S_IRUSR | S_IWUSR)) {
      return make_error(DataDirError::not_writable,
                        "'" + path + "' is owned by " + who(file.st_uid) + ", mode " + mode_text(file.st_mode) +
                            ", but the data dir by " + who(st.st_uid) + ", who runs the service and could not open "
                            "it (was meshnode once run as root?): " + fix);
    }
  }
  return "exists, owned by " + who(st.st_uid) + ", who can write it (checked as root; meshnode runs as " + owner +
         ", and refuses to run as root here)";
}

std::string explain_storage_error(const std::string& dir, const std::string& message) {
  if (message.find(std::strerror(EACCES)) == std::string::npos) return message;
  auto checked = check_data_dir(dir);
  return checked ? message : message + ": " + checked.message();
}

}  // namespace mesh::node
