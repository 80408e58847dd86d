// One batch's conversation with the kernel over a NetlinkSocket.
//
// A Conversation pipelines a whole batch: requests are packed into as few
// sendmsg calls as the socket buffers allow, answers are drained with
// recvmmsg as they arrive, and each request gets its own result, matched
// by sequence number. Dumps are collected whole and read again when the
// kernel marks them interrupted (NLM_F_DUMP_INTR).
//
// Only the last plain request of each sendmsg asks for an ack. The kernel
// runs the messages of one sendmsg in order, in the sender's context, and
// answers a failure whether or not an ack was asked for; so once a later
// request is answered, every earlier one without an error has succeeded.
// A 100,000-request batch then costs the kernel ~100 acks, not 100,000
// (each an skb to allocate, queue and copy out), and us as many fewer reads.
//
// Requests are encoded by the caller just before they are sent, into one
// buffer reused for every sendmsg, and answers are handed back as they
// arrive: memory stays proportional to what is in flight, never to the
// batch. (Touching fresh memory is what a large batch otherwise spends
// most of its time on.)
//
// Transactions (nfnetlink batches: NFNL_MSG_BATCH_BEGIN, the changes,
// NFNL_MSG_BATCH_END, as nf_tables takes its changes) differ in three ways.
// The kernel applies BEGIN..END only when they arrive in one datagram, so a
// transaction is never split: the send buffer grows to fit it (as nft
// does), and one that cannot fit fails with EMSGSIZE before anything is
// sent. The kernel answers BEGIN and END only with an error (kernels before
// 6.10 never ack them), so the ack is asked of the last change instead: its
// answer ends the transaction, and END is finished with it. And an error on
// BEGIN (a stale generation id, a commit that failed) is about the whole
// transaction: nothing of it was applied, and every request not yet answered
// ends with ECANCELED (acks the kernel still sends for them are ignored).
//
// Sending (and the loop that drives both sides) is in conversation.cc; what
// comes back, dumps and their restarts in dispatch.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "batch.h"
#include "socket.h"
#include "status.h"

namespace nl {

class Conversation : public MessageSink {
 public:
  // `tx` is the socket's send buffer, reused from one batch to the next.
  Conversation(NetlinkSocket& socket, Batch& batch, Bytes& tx);
  // Sends every request and reports each one's outcome to the batch. A
  // non-ok Status means the conversation broke: requests that were
  // answered keep their outcome, every other one ends with that errno.
  Status Run();

  // A message from the kernel (dispatch.cc).
  void OnMessage(const Message& m) override;

 private:
  // Encodes and sends the next requests that fit the budget.
  Status SendNext(bool* sent);
  // Takes back the requests from `first` on, which were readied for a
  // sendmsg that did not happen (or failed, and a failed netlink sendmsg
  // delivers nothing): they end as not sent.
  void TakeBack(size_t first);
  // Sends an interrupted dump again, under a fresh sequence number.
  Status ResendDump();
  // Ends every request not yet answered with the conversation's failure.
  void FailRemaining(const Status& failure);
  // Finishes request `done_` (the oldest in flight).
  void Finish(const Outcome& o);
  // Every request before `index` without an answer succeeded.
  void SettleBefore(size_t index);
  // The request a sequence number belongs to, or SIZE_MAX.
  size_t IndexOf(uint32_t seq) const;
  // The end of a dump (NLMSG_DONE) for request `index`.
  void DumpDone(size_t index, const Message& m);
  // Ends a transaction whose BEGIN the kernel refused: the rest was not applied.
  void CancelTransaction();

  NetlinkSocket& socket_;
  Batch& batch_;
  Bytes& tx_;

  // Requests [done_, next_) are in flight; request i went out with
  // sequence number base_seq_ + i (an interrupted dump is sent again under
  // restart_seq_). in_flight_cost_ holds, oldest first, the receive-buffer
  // space each one's answer may take.
  const size_t count_;
  const bool transaction_;
  size_t next_ = 0;
  size_t done_ = 0;
  uint32_t base_seq_ = 0;
  std::deque<uint32_t> in_flight_cost_;
  size_t reserved_ = 0;

  // The dump in flight (one per socket at a time), if any.
  size_t open_dump_ = SIZE_MAX;
  bool dump_interrupted_ = false;
  int dump_retries_ = 0;
  bool restart_pending_ = false;
  uint32_t restart_seq_ = 0;
  bool restarted_ = false;  // the open dump runs under restart_seq_
  Bytes dump_message_;      // its request, to send again
};

}  // namespace nl
