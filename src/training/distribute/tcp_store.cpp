// The rendezvous store (tcp_store.h). A request: op (1 byte), key, value (each a u32 length and bytes),
// a u32 timeout in ms; the answer: a status byte and a value. Ops: 's' set, 'g' get (waits for the key
// until the timeout; status 0 when it did not come, 2 when the server closes first), 'c' claim (set
// when absent; status 0 when taken).
#include "training/distribute/tcp_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kerascpp/error.h"

namespace kerascpp::distribute {
namespace {

bool send_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k, n -= static_cast<size_t>(k);
  }
  return true;
}

bool recv_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t k = ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k, n -= static_cast<size_t>(k);
  }
  return true;
}

bool send_bytes(int fd, const void* data, uint32_t n) { return send_all(fd, &n, 4) && send_all(fd, data, n); }

// A value of at most 1 MiB: the store holds addresses and small numbers, not data.
bool recv_bytes(int fd, std::vector<char>* out) {
  uint32_t n = 0;
  if (!recv_all(fd, &n, 4) || n > (1u << 20)) return false;
  out->resize(n);
  return recv_all(fd, out->data(), n);
}

void set_timeout(int fd, int option, std::chrono::milliseconds t) {
  if (fd < 0) return;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv);
}

addrinfo* resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(passive ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &res);
  KCPP_CHECK(rc == 0 && res, IOError, "Cannot resolve the master address ", host, ":", port, ": ", gai_strerror(rc));
  return res;
}

}  // namespace

std::pair<std::string, int> split_host_port(const std::string& address, const std::string& what) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon != std::string::npos && colon > 0 && colon + 1 < address.size() &&
      address.find_first_not_of("0123456789", colon + 1) == std::string::npos && address.size() - colon <= 6)
    port = std::stoi(address.substr(colon + 1));
  KCPP_CHECK(port > 0 && port < 65536, ValueError, "Expected ", what, " as \"host:port\" (a port in 1..65535). Received: \"",
             address, "\"");
  return {address.substr(0, colon), port};
}

StoreServer::StoreServer(const std::string& address, int port) {
  addrinfo* res = resolve("", port, true);
  listen_fd_ = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool ok = listen_fd_ >= 0 && ::bind(listen_fd_, res->ai_addr, res->ai_addrlen) == 0 && ::listen(listen_fd_, 128) == 0;
  const int err = errno;
  ::freeaddrinfo(res);
  if (!ok) {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    KCPP_THROW(IOError, "Worker 0 cannot serve the rendezvous at the master address ", address, ": ", std::strerror(err),
               " (another job on that port? choose another master port)");
  }
  acceptor_ = std::thread([this] { accept_loop(); });
}

StoreServer::~StoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : clients_) ::shutdown(fd, SHUT_RDWR);
  }
  changed_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();  // before the descriptor closes: its number could be reused under accept()
  ::close(listen_fd_);
  for (std::thread& t : threads_) t.join();
  for (int fd : clients_) ::close(fd);
}

void StoreServer::accept_loop() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    clients_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void StoreServer::serve(int fd) {
  for (;;) {
    char op = 0;
    std::vector<char> key_bytes, value;
    uint32_t timeout_ms = 0;
    if (!recv_all(fd, &op, 1) || !recv_bytes(fd, &key_bytes) || !recv_bytes(fd, &value) || !recv_all(fd, &timeout_ms, 4))
      return;  // the client went (or the server stops): its socket is closed with the server
    const std::string key(key_bytes.begin(), key_bytes.end());
    char status = 1;
    std::vector<char> answer;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (op == 's') {
        values_[key] = value;
        changed_.notify_all();
      } else if (op == 'c') {
        status = values_.emplace(key, value).second ? 1 : 0;
        changed_.notify_all();
      } else if (op == 'g') {
        const bool found = changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                             [&] { return stopping_ || values_.count(key) > 0; });
        status = stopping_ && values_.count(key) == 0 ? 2 : found ? 1 : 0;
        if (found) answer = values_[key];
      } else {
        return;  // not a kerascpp worker: drop it
      }
    }
    if (!send_all(fd, &status, 1) || !send_bytes(fd, answer.data(), static_cast<uint32_t>(answer.size())) ||
        status == 2)
      return;
  }
}

StoreClient::StoreClient(const std::string& address, std::chrono::milliseconds timeout)
    : address_(address), timeout_(timeout) {
  const auto [host, port] = split_host_port(address, "the master address");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "no answer";
  for (;;) {  // worker 0 may not listen yet: try again until the timeout
    addrinfo* res = resolve(host, port, false);
    fd_ = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
    // Linux bounds connect() by the send timeout: a host that never answers costs one attempt's share.
    set_timeout(fd_, SO_SNDTIMEO, std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(5)));
    const bool ok = fd_ >= 0 && ::connect(fd_, res->ai_addr, res->ai_addrlen) == 0;
    last = std::strerror(errno);
    ::freeaddrinfo(res);
    if (ok) break;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    KCPP_CHECK(std::chrono::steady_clock::now() < deadline, IOError, "Cannot reach the master ", address, " within ",
               timeout.count() / 1000.0, " s (", last, "): is worker 0 running, and is the address the one it serves?");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A get waits up to the timeout at the server: a server that vanishes without closing is given more.
  set_timeout(fd_, SO_RCVTIMEO, timeout + std::chrono::seconds(30));
  set_timeout(fd_, SO_SNDTIMEO, timeout + std::chrono::seconds(30));
}

StoreClient::~StoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<char> StoreClient::request(char op, const std::string& key, const std::vector<char>& data,
                                       std::chrono::milliseconds timeout) {
  const uint32_t ms = static_cast<uint32_t>(std::min<int64_t>(timeout.count(), 0xffffffffLL));
  char status = 0;
  std::vector<char> answer;
  const bool ok = send_all(fd_, &op, 1) && send_bytes(fd_, key.data(), static_cast<uint32_t>(key.size())) &&
                  send_bytes(fd_, data.data(), static_cast<uint32_t>(data.size())) && send_all(fd_, &ms, 4) &&
                  recv_all(fd_, &status, 1) && recv_bytes(fd_, &answer);
  KCPP_CHECK(ok, IOError, "The rendezvous at ", address_, " closed while this worker waited for '", key,
             "': worker 0 stopped");
  answer.insert(answer.begin(), status);
  return answer;
}

void StoreClient::set(const std::string& key, const std::vector<char>& data) { request('s', key, data, timeout_); }

bool StoreClient::claim(const std::string& key, const std::vector<char>& data) {
  return request('c', key, data, timeout_)[0] == 1;
}

bool StoreClient::try_get(const std::string& key, std::chrono::milliseconds timeout, std::vector<char>* out) {
  std::vector<char> a = request('g', key, {}, timeout);
  KCPP_CHECK(a[0] != 2, IOError, "Worker 0 closed the rendezvous at ", address_, " while this worker waited for '", key,
             "': it stopped with an error of its own (see worker 0's)");
  if (a[0] != 1) return false;
  out->assign(a.begin() + 1, a.end());
  return true;
}

std::vector<char> StoreClient::get_within(const std::string& key, std::chrono::milliseconds timeout) {
  std::vector<char> out;
  KCPP_CHECK(try_get(key, timeout, &out), IOError, "Timed out after ", timeout.count() / 1000.0, " s waiting for '", key,
             "' at the rendezvous ", address_, ": a worker did not join");
  return out;
}

std::vector<char> StoreClient::get(const std::string& key) { return get_within(key, timeout_); }

void StoreClient::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  for (const std::string& k : keys) get_within(k, timeout);
}

}  // namespace kerascpp::distribute
