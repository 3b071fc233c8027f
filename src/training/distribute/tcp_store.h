// The rendezvous of a DistributedContext: a small key-value store that worker 0 serves on the master's
// port while the workers exchange their Gloo addresses (Gloo's own stores are a shared file or Redis).
// Keys are set once; get waits for a key until the timeout. The server is closed once every worker has
// connected its Gloo pairs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace kerascpp::distribute {

// "host:port" split; ValueError naming `what` when it is not that.
std::pair<std::string, int> split_host_port(const std::string& address, const std::string& what);

class StoreServer {
 public:
  // Listens on every interface at `port` (IOError when it cannot, naming the address).
  StoreServer(const std::string& address, int port);
  ~StoreServer();  // closes every connection and joins its threads

 private:
  void accept_loop();
  void serve(int fd);

  int listen_fd_ = -1;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::vector<char>> values_;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
  std::thread acceptor_;
};

class StoreClient : public gloo::rendezvous::Store {
 public:
  // Connects to the server at address ("host:port"), retrying until `timeout` (IOError then).
  StoreClient(const std::string& address, std::chrono::milliseconds timeout);
  ~StoreClient() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;  // waits for the key (IOError after the timeout)
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  // Sets key when no one has: true; false when another client set it first.
  bool claim(const std::string& key, const std::vector<char>& data);
  // The key's value, or false when it did not come within `timeout`.
  bool try_get(const std::string& key, std::chrono::milliseconds timeout, std::vector<char>* out);

 private:
  // The key's value; IOError when it did not come within `timeout`.
  std::vector<char> get_within(const std::string& key, std::chrono::milliseconds timeout);
  std::vector<char> request(char op, const std::string& key, const std::vector<char>& data,
                            std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::string address_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kerascpp::distribute
