#include "batch.h"

namespace nl {

ExchangeBatch::ExchangeBatch(std::vector<Exchange>& xs) : xs_(xs) {}

RequestKind ExchangeBatch::Encode(size_t i, Bytes& out) {
  const Exchange& x = xs_[i];
  out.insert(out.end(), x.request.begin(), x.request.end());
  return x.dump ? RequestKind::kDump : x.expects_data ? RequestKind::kGet : RequestKind::kPlain;
}

void ExchangeBatch::OnData(size_t i, const Message& m) {
  xs_[i].replies.emplace_back(m.payload - NLMSG_HDRLEN, m.payload + m.payload_len);
}

void ExchangeBatch::OnDone(size_t i, const Outcome& o) {
  Exchange& x = xs_[i];
  x.done = true;
  x.error = o.error;
  x.ext_message = o.message;
  x.ext_offset = o.offset;
  x.dump_retries = o.dump_retries;
  x.broken = o.where != nullptr;
  x.sent = o.sent;
  if (o.error && o.echo) x.error_echo.assign(o.echo, o.echo + o.echo_len);
}

}  // namespace nl
