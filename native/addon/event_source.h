// The JavaScript side of a multicast stream (an nl::MulticastReader
// subclass): opened on a worker, it wakes JavaScript through a thread-safe
// function whenever its queue stops being empty; JavaScript then takes
// everything queued at once. Shared by the object that JavaScript holds and
// the job that opens the stream, so either may end first.
#pragma once

#include <napi.h>

#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "../netlink/multicast.h"
#include "job.h"

namespace addon {

template <typename Stream>
class EventSource : public std::enable_shared_from_this<EventSource<Stream>> {
 public:
  // Opens the stream on a worker thread; `wake` is to be called on the reader thread.
  using Opener = std::function<nl::Status(nl::MulticastReader::Wake wake, std::unique_ptr<Stream>& out)>;

  EventSource(Napi::Env env, Napi::Function on_readable, const char* name, Opener open)
      : open_(std::move(open)), wake_(Napi::ThreadSafeFunction::New(env, on_readable, name, 0, 1)) {}
  ~EventSource() { Close(); }

  // A promise settled once the stream reads (or failed to open). Once only, before close().
  Napi::Value Open(Napi::Env env) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (opened_ || closed_) throw Napi::Error::New(env, "an event stream opens once, before it is closed");
      opened_ = true;
    }
    return Schedule(env, std::make_unique<OpenJob>(this->shared_from_this()));
  }

  // Runs f(stream) with the stream held, if it is open.
  template <typename F>
  void WithStream(F f) {
    std::lock_guard<std::mutex> g(mu_);
    if (stream_) f(*stream_);
  }

  // Stops the reader (no wake after this) and lets the wake function go. Idempotent.
  void Close() {
    std::unique_ptr<Stream> s;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (closed_) return;
      closed_ = true;
      s = std::move(stream_);
    }
    if (s) s->Stop();
    wake_.Release();
  }

 private:
  class OpenJob : public Job {
   public:
    // The job holds its own reference to the wake function (taken here, on
    // the JavaScript thread): a close() while it runs cannot free it under
    // a stream that is still starting.
    explicit OpenJob(std::shared_ptr<EventSource> s) : s_(std::move(s)) { s_->wake_.Acquire(); }
    void Run() override {
      // The job's reference goes however Run() ends (an opener that throws, say).
      struct Release {
        Napi::ThreadSafeFunction& wake;
        ~Release() { wake.Release(); }
      } release{s_->wake_};
      std::unique_ptr<Stream> stream;
      Napi::ThreadSafeFunction wake = s_->wake_;
      status = s_->open_([wake]() mutable { wake.NonBlockingCall(); }, stream);
      if (status.ok()) {
        std::lock_guard<std::mutex> g(s_->mu_);
        if (!s_->closed_) s_->stream_ = std::move(stream);
      }
      stream.reset();  // closed meanwhile: stopped before the reference goes
    }
    Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

   private:
    std::shared_ptr<EventSource> s_;
  };

  Opener open_;
  Napi::ThreadSafeFunction wake_;
  std::mutex mu_;  // guards stream_ (opened on a worker, used on the JavaScript thread), closed_, opened_
  std::unique_ptr<Stream> stream_;
  bool closed_ = false;
  bool opened_ = false;
};

}  // namespace addon
