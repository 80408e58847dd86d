#include "dump_job.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "batches.h"
#include "codec.h"
#include "js_bridge.h"

namespace ipvs {

namespace {

// Records are handed to JavaScript once this many are finished (about
// 640 KiB): JavaScript turns one chunk into objects while the kernel
// answers the next dumps, and the job holds two chunks' worth of memory
// instead of the whole table's (17 MiB of fresh pages for 100,000
// destinations, each a page fault before a byte is written).
constexpr size_t kChunkRecords = 4096;

// Hands finished records to a JavaScript function, one chunk at a time,
// from the worker thread. The writer keeps writing into its arena while
// JavaScript reads the other one; the two are swapped at each hand-over.
// Only one chunk is ever out, and no record is seen by JavaScript while it
// can change. The worker never waits for JavaScript while it holds the
// handle's socket (JavaScript may be waiting for that, in close()): while
// a chunk is still out, the writer just keeps what it has for the next
// hand-over.
class ChunkStream {
 public:
  ChunkStream(Napi::Env env, Napi::Function on_chunk, rec::Arena spare)
      : tsfn_(Napi::ThreadSafeFunction::New(env, on_chunk, "ipvs-netlink:dump", 0, 1)), spare_(std::move(spare)) {}
  ChunkStream(const ChunkStream&) = delete;
  ChunkStream& operator=(const ChunkStream&) = delete;

  // Worker thread: hands over every record written so far, and the strings
  // interned since the last hand-over, unless a chunk is still out. False
  // when JavaScript can no longer be called (the environment is shutting
  // down).
  bool Flush(rec::ReplyWriter& w) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (closed_) return false;
      if (out_) return true;
    }
    spare_->swap(w.bytes());
    w.bytes().clear();
    const std::vector<std::string>& s = w.strings();
    strings_.assign(s.begin() + static_cast<std::ptrdiff_t>(strings_sent_), s.end());
    strings_sent_ = s.size();
    {
      std::lock_guard<std::mutex> g(mu_);
      out_ = true;
    }
    if (tsfn_.NonBlockingCall(this, Deliver) != napi_ok) {
      std::lock_guard<std::mutex> g(mu_);
      out_ = false;
      closed_ = true;
      return false;
    }
    return true;
  }

  // Worker thread, last, with the socket let go: waits for JavaScript to
  // finish the chunk it has, and lets the function go.
  void Finish() {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return !out_; });
    }
    tsfn_.Release();
  }

  // Strings that went out with chunks: the job's result carries the rest.
  size_t strings_sent() const { return strings_sent_; }

 private:
  // JavaScript thread: the chunk as a view that is detached once the
  // function returns (it reads the records at once, never later).
  static void Deliver(Napi::Env env, Napi::Function fn, ChunkStream* self) {
    if (env != nullptr && fn != nullptr) {
      std::vector<uint8_t>& bytes = *self->spare_;
      Napi::ArrayBuffer view = Napi::ArrayBuffer::New(env, bytes.data(), bytes.size());
      try {
        fn.Call({view, StringsToJs(env, self->strings_, 0)});
      } catch (const Napi::Error&) {
        // The TypeScript reader keeps its own errors and throws them when
        // the dump resolves; nothing is left pending here.
      }
      view.Detach();
    }
    std::lock_guard<std::mutex> g(self->mu_);
    self->out_ = false;
    self->cv_.notify_all();
  }

  Napi::ThreadSafeFunction tsfn_;
  rec::Arena spare_;                  // the chunk out with JavaScript
  std::vector<std::string> strings_;  // its new strings
  size_t strings_sent_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool out_ = false;     // a chunk is with JavaScript
  bool closed_ = false;  // JavaScript can no longer be called
};

// Hands the records over whenever a request has finished with enough of them.
void MaybeFlush(ChunkStream* stream, rec::ReplyWriter& out, bool* broken) {
  if (stream != nullptr && !*broken && out.count() >= kChunkRecords && !stream->Flush(out)) *broken = true;
}

// Step 1 of a dump: every service, written as records (request 0), with
// their identities kept for step 2.
class ServiceDump : public RecordBatch {
 public:
  ServiceDump(rec::ReplyWriter& out, ChunkStream* stream, bool* broken) : RecordBatch(out), stream_(stream), broken_(broken) {}
  std::vector<ServiceKey> keys;

 private:
  size_t Count() const override { return 1; }
  nl::RequestKind EncodeRequest(size_t, uint16_t family, nl::Bytes& out) override {
    Request r;
    r.cmd = IPVS_CMD_GET_SERVICE;
    r.dump = true;
    EncodeInto(r, family, out);
    return nl::RequestKind::kDump;
  }
  uint16_t DefaultAf(size_t) const override { return AF_INET; }
  void OnReply(size_t i, const Reply& r) override {
    for (const Service& s : r.services) {
      keys.push_back(s.key);
      out_.AddService(ResultIndex(i), s);
    }
  }
  void OnDropped(size_t) override { keys.clear(); }
  void AfterDone(size_t) override { MaybeFlush(stream_, out_, broken_); }

  ChunkStream* stream_;
  bool* broken_;
};

// Step 2: the destinations of each service (request i + 1 for service i).
class DestinationDumps : public RecordBatch {
 public:
  DestinationDumps(rec::ReplyWriter& out, const std::vector<ServiceKey>& keys, ChunkStream* stream, bool* broken)
      : RecordBatch(out, 1), keys_(keys), stream_(stream), broken_(broken) {}

 private:
  size_t Count() const override { return keys_.size(); }
  nl::RequestKind EncodeRequest(size_t i, uint16_t family, nl::Bytes& out) override {
    Request r;
    r.cmd = IPVS_CMD_GET_DEST;
    r.dump = true;
    r.has_service = true;
    r.service_key_only = true;
    r.service.key = keys_[i];
    EncodeInto(r, family, out);
    return nl::RequestKind::kDump;
  }
  uint16_t DefaultAf(size_t i) const override { return keys_[i].af; }
  void AfterDone(size_t) override { MaybeFlush(stream_, out_, broken_); }

  const std::vector<ServiceKey>& keys_;
  ChunkStream* stream_;
  bool* broken_;
};

// Every service and its destinations in one job: a service dump, then one
// destination dump per service (the kernel serves one dump at a time per
// socket, so they go one after another). Request 0 is the service dump;
// request i + 1 the destinations of service i. With a stream, finished
// records go to JavaScript in chunks as they come (a request's records only
// once it is done: an interrupted dump read again never takes back what
// was handed over); the result carries the rest.
class DumpJob : public addon::Job {
 public:
  DumpJob(Napi::Env env, std::shared_ptr<addon::Channel> ch, FamilyIdRef id, std::shared_ptr<ArenaSlot> slot,
          Napi::Value on_chunk)
      : ch_(std::move(ch)), id_(std::move(id)), lease_(std::move(slot)), out_(lease_.arena()) {
    if (on_chunk.IsFunction())
      stream_ = std::make_unique<ChunkStream>(env, on_chunk.As<Napi::Function>(), lease_.spare());
  }

  void Run() override {
    Dump();
    if (stream_) stream_->Finish();
    if (status.ok() && broken_)
      status = nl::Status::Errno(ECANCELED, "dump", "JavaScript could not be handed the records (shutting down)");
  }

  Napi::Value Result(Napi::Env env) override {
    return lease_.Lend(RepliesToJs(env, failures_, out_, stream_ ? stream_->strings_sent() : 0));
  }

 private:
  void Dump() {
    std::lock_guard<std::mutex> g(ch_->mutex());
    ServiceDump services(out_, stream_.get(), &broken_);
    status = services.Run(*ch_, *id_);
    failures_ = std::move(services.failures());
    if (!status.ok() || !failures_.empty() || broken_) return;
    // Room for what is kept before a hand-over, or for the whole table (32
    // destinations per service): reserved, not touched, so it costs no
    // memory until used and spares the copies of a growing buffer.
    const size_t records = stream_ ? kChunkRecords + 64 : services.keys.size() * 33 + 1;
    out_.bytes().reserve(records * rec::kReplySize);
    DestinationDumps dests(out_, services.keys, stream_.get(), &broken_);
    status = dests.Run(*ch_, *id_);
    failures_ = std::move(dests.failures());
  }

  std::shared_ptr<addon::Channel> ch_;
  FamilyIdRef id_;
  ArenaLease lease_;
  rec::ReplyWriter out_;  // writes into lease_'s arena
  std::unique_ptr<ChunkStream> stream_;
  bool broken_ = false;  // a hand-over failed: the job ends with an error
  std::vector<Failure> failures_;
};

}  // namespace

std::unique_ptr<addon::Job> MakeDumpJob(Napi::Env env, std::shared_ptr<addon::Channel> ch, FamilyIdRef id,
                                        std::shared_ptr<ArenaSlot> slot, Napi::Value on_chunk) {
  return std::make_unique<DumpJob>(env, std::move(ch), std::move(id), std::move(slot), on_chunk);
}

}  // namespace ipvs
