// What comes back for a Conversation: each message matched to the request it
// answers by sequence number, earlier requests settled by a later answer,
// and dumps collected until NLMSG_DONE, read again when interrupted.
#include <errno.h>
#include <linux/netlink.h>

#include <cstring>

#include "conversation.h"

namespace nl {

size_t Conversation::IndexOf(uint32_t seq) const {
  if (restarted_ && seq == restart_seq_) return open_dump_;
  const uint32_t rel = seq - base_seq_;  // wraps around with the counter
  if (rel < next_ && rel >= done_) return rel;
  return SIZE_MAX;
}

void Conversation::OnMessage(const Message& m) {
  // Sequence and port checks: anything not addressed to us, or answering a
  // request we are not waiting for, is ignored rather than misattributed.
  if (m.hdr.nlmsg_pid != socket_.port_id() && m.hdr.nlmsg_pid != 0) return;
  const size_t index = IndexOf(m.hdr.nlmsg_seq);
  if (index == SIZE_MAX) return;
  // Anything about this request means the kernel is done with every
  // earlier one: those that did not fail succeeded.
  SettleBefore(index);

  if (m.hdr.nlmsg_type == NLMSG_ERROR) {
    ErrorReply e;
    std::string perr;
    Outcome o;
    if (!ParseError(m, e, perr)) {
      o.error = EBADMSG;
      o.message = perr;
    } else {
      o.error = e.error;
      o.message = std::move(e.message);
      o.offset = e.offset;
      o.echo = e.echo;
      o.echo_len = e.echo_len;
    }
    if (index == open_dump_) o.dump_retries = dump_retries_;
    // For a dump, an ack only follows an error; a plain request is finished.
    Finish(o);
    if (transaction_ && index == 0 && o.error) CancelTransaction();
    static const Outcome kEnd;
    if (transaction_ && index + 2 == count_) Finish(kEnd);
    return;
  }
  if (index == open_dump_ && (m.hdr.nlmsg_flags & NLM_F_DUMP_INTR)) dump_interrupted_ = true;
  if (m.hdr.nlmsg_type == NLMSG_DONE) {
    DumpDone(index, m);
    return;
  }
  if (m.hdr.nlmsg_type < NLMSG_MIN_TYPE) return;  // NOOP / OVERRUN
  batch_.OnData(index, m);
}

void Conversation::DumpDone(size_t index, const Message& m) {
  int err = 0;
  if (m.payload_len >= sizeof(int)) std::memcpy(&err, m.payload, sizeof err);
  const bool dump = index == open_dump_;
  if (dump && err == 0 && dump_interrupted_ && dump_retries_ < socket_.options().max_dump_retries) {
    // The table changed while it was being read: read it again.
    dump_retries_++;
    socket_.CountDumpRestart();
    dump_interrupted_ = false;
    batch_.OnRestart(index);
    restart_pending_ = true;
    return;
  }
  Outcome o;
  if (!ErrnoOf(err, o.error)) {
    o.error = EBADMSG;
    o.message = "NLMSG_DONE with errno INT_MIN";
  }
  if (dump) {
    o.dump_retries = dump_retries_;
    if (o.error == 0 && dump_interrupted_) {
      o.error = EINTR;
      o.message = "dump interrupted " + std::to_string(dump_retries_) + " times by concurrent changes";
    }
  }
  Finish(o);
}

}  // namespace nl
