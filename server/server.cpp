// The libevent side of `pmindex serve`: see server.hpp.
#include "server.hpp"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "pmindex/error.hpp"

namespace pmindex::server {

namespace {

constexpr size_t k_out_high = 4 << 20;  // stop reading a client with this much unsent

struct worker;

struct conn {
  worker* w;
  bufferevent* bev;
  session s;
  std::string out;
  bool closing = false;
  bool lingering = false;
  bool paused = false;
  conn(worker* wk, bufferevent* b, store& st, counters& c, const server_info& i)
      : w(wk), bev(b), s(st, c, i) {}
};

struct shared_state {
  store& st;
  counters ctr;
  server_info info;
  config cfg;
  explicit shared_state(store& s) : st(s) {}
};

struct worker {
  shared_state* sh = nullptr;
  event_base* base = nullptr;
  event* notify = nullptr;
  event* reclaim = nullptr;
  event* quit = nullptr;  // activated to stop the loop: see on_quit
  std::mutex mu;
  std::vector<evutil_socket_t> pending;
  std::unordered_set<conn*> conns;
  std::thread th;
};

void free_conn(conn* c) {
  c->w->conns.erase(c);
  bufferevent_free(c->bev);
  c->w->sh->ctr.curr_connections.fetch_sub(1, std::memory_order_relaxed);
  delete c;
}

// Closing with replies sent: shut our side down, then read and drop what
// the client still sends until it closes (or 2 s pass), so unread input
// does not make the kernel reset the connection before the client has read
// the last reply.
void linger(conn* c) {
  c->lingering = true;
  shutdown(bufferevent_getfd(c->bev), SHUT_WR);
  timeval tv{2, 0};
  bufferevent_set_timeouts(c->bev, &tv, nullptr);
  bufferevent_enable(c->bev, EV_READ);
}

// A reply goes straight to the socket when nothing is queued before it, as
// memcached does: handing it to the bufferevent costs a write-event
// registration, a loop round and its removal per request. What the socket
// does not take (or an error, which the bufferevent then reports) is queued.
// Streamed and closing replies are always queued: they go on from on_write,
// which runs only when queued output drains.
void send_reply(conn* c) {
  const char* p = c->out.data();
  size_t n = c->out.size();
  if (!c->s.busy() && !c->s.closing() && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
    ssize_t k = send(bufferevent_getfd(c->bev), p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
    }
  }
  if (n) bufferevent_write(c->bev, p, n);
}

// Handles what the client sent.
void process(conn* c) {
  evbuffer* in = bufferevent_get_input(c->bev);
  if (c->lingering) evbuffer_drain(in, evbuffer_get_length(in));
  if (c->paused || c->closing) return;
  size_t n = evbuffer_get_length(in);
  if (!c->s.busy() && (n == 0 || n < c->s.need())) return;
  const char* p = n ? reinterpret_cast<const char*>(evbuffer_pullup(in, static_cast<ev_ssize_t>(n))) : "";
  c->out.clear();
  size_t used = c->s.feed(p, n, c->out, k_out_high);
  evbuffer_drain(in, used);
  auto& ctr = c->w->sh->ctr;
  ctr.bytes_read.fetch_add(used, std::memory_order_relaxed);
  if (!c->out.empty()) {
    ctr.bytes_written.fetch_add(c->out.size(), std::memory_order_relaxed);
    send_reply(c);
  }
  if (c->out.capacity() > (1 << 20)) std::string().swap(c->out);  // do not keep a big buffer per client
  evbuffer* outb = bufferevent_get_output(c->bev);
  if (c->s.closing()) {
    c->closing = true;
    bufferevent_disable(c->bev, EV_READ);
    if (evbuffer_get_length(outb) == 0) linger(c);
  } else if (c->s.busy() || evbuffer_get_length(outb) > k_out_high) {
    // A streamed reply (mr, a key listing) goes on once this part drained.
    c->paused = true;  // resumed by on_write once the replies drained
    bufferevent_disable(c->bev, EV_READ);
  }
}

void on_read(bufferevent*, void* arg) { process(static_cast<conn*>(arg)); }

// A client that closed its sending side after a range read or key listing
// still gets all of it: the rest is produced as the replies drain.
void stream_more(conn* c) {
  c->out.clear();
  c->s.feed("", 0, c->out, k_out_high);
  if (!c->out.empty()) {
    c->w->sh->ctr.bytes_written.fetch_add(c->out.size(), std::memory_order_relaxed);
    bufferevent_write(c->bev, c->out.data(), c->out.size());
  }
}

// The output buffer drained (low watermark 0).
void on_write(bufferevent*, void* arg) {
  conn* c = static_cast<conn*>(arg);
  if (c->closing) {
    if (c->s.busy() && !c->lingering)
      stream_more(c);
    else if (!c->lingering)
      linger(c);
    return;
  }
  if (c->paused) {
    c->paused = false;
    bufferevent_enable(c->bev, EV_READ);
    process(c);
  }
}

// A client that shut its sending side down (EOF) still gets the replies to
// what it sent; an error or an idle timeout closes at once.
void on_event(bufferevent* bev, short events, void* arg) {
  conn* c = static_cast<conn*>(arg);
  if ((events & BEV_EVENT_EOF) && !(events & BEV_EVENT_ERROR) &&
      (evbuffer_get_length(bufferevent_get_output(bev)) > 0 || c->s.busy())) {
    c->closing = true;  // on_write frees it once the replies are sent
    bufferevent_disable(bev, EV_READ);
    if (evbuffer_get_length(bufferevent_get_output(bev)) == 0) stream_more(c);
    return;
  }
  if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) free_conn(c);
}

// Items a worker replaced or deleted wait in its epoch slot until it next
// collects; a worker that goes quiet would keep them (large items: much of
// the pool) from the others. Collecting a few times a second bounds that.
void on_reclaim(evutil_socket_t, short, void* arg) {
  try {
    static_cast<worker*>(arg)->sh->st.idx().pool().collect();
  } catch (const std::exception&) {
  }
}

// Stopping a worker: event_base_loopbreak() from the main thread is lost
// when the worker has not entered event_base_loop() yet (the loop clears
// the break flag as it starts), which left shutdown joining a worker
// forever. An activated event stays queued until the loop runs it, so the
// break is made from inside the loop.
void on_quit(evutil_socket_t, short, void* arg) { event_base_loopbreak(static_cast<worker*>(arg)->base); }

void on_notify(evutil_socket_t, short, void* arg) {
  worker* w = static_cast<worker*>(arg);
  std::vector<evutil_socket_t> fds;
  {
    std::lock_guard g(w->mu);
    fds.swap(w->pending);
  }
  for (evutil_socket_t fd : fds) {
    bufferevent* bev = bufferevent_socket_new(w->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) {
      evutil_closesocket(fd);
      w->sh->ctr.curr_connections.fetch_sub(1, std::memory_order_relaxed);
      continue;
    }
    conn* c = new conn(w, bev, w->sh->st, w->sh->ctr, w->sh->info);
    w->conns.insert(c);
    bufferevent_setcb(bev, on_read, on_write, on_event, c);
    bufferevent_set_max_single_read(bev, 256 * 1024);
    if (w->sh->cfg.idle_timeout) {
      timeval tv{static_cast<time_t>(w->sh->cfg.idle_timeout), 0};
      bufferevent_set_timeouts(bev, &tv, nullptr);
    }
    bufferevent_enable(bev, EV_READ);
  }
}

struct acceptor {
  shared_state* sh;
  std::vector<std::unique_ptr<worker>>* workers;
  size_t next = 0;
};

void on_accept(evconnlistener*, evutil_socket_t fd, sockaddr*, int, void* arg) {
  acceptor* a = static_cast<acceptor*>(arg);
  auto& ctr = a->sh->ctr;
  if (ctr.curr_connections.load(std::memory_order_relaxed) >= a->sh->cfg.max_connections) {
    static const char k_msg[] = "SERVER_ERROR too many open connections\r\n";
    (void)!send(fd, k_msg, sizeof k_msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    evutil_closesocket(fd);
    ctr.rejected_connections.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ctr.curr_connections.fetch_add(1, std::memory_order_relaxed);
  ctr.total_connections.fetch_add(1, std::memory_order_relaxed);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  worker* w = (*a->workers)[a->next++ % a->workers->size()].get();
  {
    std::lock_guard g(w->mu);
    w->pending.push_back(fd);
  }
  event_active(w->notify, EV_READ, 0);
}

void on_signal(evutil_socket_t, short, void* arg) { event_base_loopbreak(static_cast<event_base*>(arg)); }

// "host:port" or "[v6]:port" -> a bound, listening address.
addrinfo* resolve(const std::string& listen) {
  std::string host, port;
  if (!listen.empty() && listen[0] == '[') {
    size_t e = listen.find("]:");
    if (e == std::string::npos)
      throw error(errc::usage, "--listen " + listen + ": expected [v6-address]:port");
    host = listen.substr(1, e - 1);
    port = listen.substr(e + 2);
  } else {
    size_t e = listen.rfind(':');
    if (e == std::string::npos) throw error(errc::usage, "--listen " + listen + ": expected host:port");
    host = listen.substr(0, e);
    port = listen.substr(e + 1);
  }
  // getaddrinfo takes a numeric port modulo 65536 (99999 would be 34463).
  bool digits = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoul(port) > 65535)
    throw error(errc::usage, "--listen " + listen + ": the port must be a number from 0 to 65535");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) throw error(errc::usage, "--listen " + listen + ": " + gai_strerror(rc));
  return res;
}

std::string describe(evutil_socket_t fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (ss.ss_family == AF_INET) {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
    port = ntohs(s4->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
  inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
  port = ntohs(s6->sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

}  // namespace

void check_listen(const std::string& listen) { freeaddrinfo(resolve(listen)); }

int run(store& st, const config& cfg, server_info info) {
  static std::once_flag once;
  std::call_once(once, [] { evthread_use_pthreads(); });
  std::signal(SIGPIPE, SIG_IGN);
  shared_state sh(st);
  sh.cfg = cfg;
  info.threads = cfg.threads;
  info.max_connections = cfg.max_connections;
  info.idle_timeout = cfg.idle_timeout;
  sh.info = info;

  event_base* main_base = event_base_new();
  if (!main_base) throw error(errc::io, "event_base_new failed");
  addrinfo* ai = resolve(cfg.listen);
  evconnlistener* lis = nullptr;
  acceptor acc{&sh, nullptr};
  std::vector<std::unique_ptr<worker>> workers;
  acc.workers = &workers;
  for (addrinfo* a = ai; a && !lis; a = a->ai_next)
    lis = evconnlistener_new_bind(main_base, on_accept, &acc, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 1024,
                                  a->ai_addr, static_cast<int>(a->ai_addrlen));
  freeaddrinfo(ai);
  if (!lis) {
    event_base_free(main_base);
    throw error(errc::io, "cannot listen on " + cfg.listen + ": " + std::strerror(errno));
  }
  std::string where = describe(evconnlistener_get_fd(lis));

  for (unsigned i = 0; i < cfg.threads; ++i) {
    auto w = std::make_unique<worker>();
    w->sh = &sh;
    w->base = event_base_new();
    w->notify = event_new(w->base, -1, EV_PERSIST | EV_READ, on_notify, w.get());
    event_add(w->notify, nullptr);
    w->reclaim = event_new(w->base, -1, EV_PERSIST, on_reclaim, w.get());
    timeval every{0, 200 * 1000};
    event_add(w->reclaim, &every);
    w->quit = event_new(w->base, -1, 0, on_quit, w.get());
    worker* wp = w.get();
    w->th = std::thread([wp] { event_base_loop(wp->base, EVLOOP_NO_EXIT_ON_EMPTY); });
    workers.push_back(std::move(w));
  }

  // The sweeper: delayed flush_all, expired items.
  std::mutex sweep_mu;
  std::condition_variable sweep_cv;
  bool stop = false;
  std::thread sweeper([&] {
    try {
      if (!sh.info.created) st.count_items();  // a new pool holds nothing
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pmindex serve: counting items: %s\n", e.what());
    }
    auto next_sweep = std::chrono::steady_clock::now() + std::chrono::seconds(cfg.sweep_interval);
    std::unique_lock lk(sweep_mu);
    while (!sweep_cv.wait_for(lk, std::chrono::seconds(1), [&] { return stop; })) {
      lk.unlock();
      try {
        st.run_due_flush();
        if (std::chrono::steady_clock::now() >= next_sweep) {
          sh.ctr.expired_swept.fetch_add(st.sweep_expired(), std::memory_order_relaxed);
          next_sweep = std::chrono::steady_clock::now() + std::chrono::seconds(cfg.sweep_interval);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "pmindex serve: sweeper: %s\n", e.what());
      }
      lk.lock();
    }
  });

  event* sigterm = evsignal_new(main_base, SIGTERM, on_signal, main_base);
  event* sigint = evsignal_new(main_base, SIGINT, on_signal, main_base);
  event_add(sigterm, nullptr);
  event_add(sigint, nullptr);

  std::fprintf(
      stderr,
      "pmindex serve: listening on %s (%u threads, at most %u connections), %.3f s after opening began\n",
      where.c_str(), cfg.threads, cfg.max_connections, info.startup_seconds);
  if (!cfg.ready_file.empty()) {
    std::string tmp = cfg.ready_file + ".tmp";
    if (FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%s\n", where.substr(where.rfind(':') + 1).c_str());
      std::fclose(f);
      std::rename(tmp.c_str(), cfg.ready_file.c_str());
    }
  }
  event_base_dispatch(main_base);

  std::fprintf(stderr, "pmindex serve: stopping\n");
  evconnlistener_free(lis);
  for (auto& w : workers) event_active(w->quit, EV_READ, 0);
  for (auto& w : workers) {
    w->th.join();
    while (!w->conns.empty()) free_conn(*w->conns.begin());
    for (evutil_socket_t fd : w->pending) evutil_closesocket(fd);
    event_free(w->notify);
    event_free(w->reclaim);
    event_free(w->quit);
    event_base_free(w->base);
  }
  {
    std::lock_guard g(sweep_mu);
    stop = true;
  }
  sweep_cv.notify_all();
  sweeper.join();
  event_free(sigterm);
  event_free(sigint);
  event_base_free(main_base);
  return 0;
}

}  // namespace pmindex::server
