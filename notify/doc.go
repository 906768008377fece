// Package notify is the LISTEN/NOTIFY hub (R-S7): sessions subscribe to
// channels, any session (or the refresh runner, on channel mv_refresh)
// publishes, and each subscriber's notifications wait in its own bounded
// queue until its connection delivers them as NotificationResponse messages.
//
// Transaction semantics (NOTIFY inside a transaction block goes out at
// COMMIT, never after ROLLBACK) belong to the caller: the session queues its
// NOTIFYs and calls Publish after the commit. The hub only fans out.
//
// A notification can carry a redacted payload for the subscribers whose
// session's role may not see the details it tells (a refresh error
// quoting data, PublishRestricted); the hub fans both out and the session
// chooses, per listener, when it delivers.
//
// A subscriber that does not read falls behind by at most MaxQueue
// notifications; beyond that the oldest are dropped (PostgreSQL's queue is
// large but finite too; there the sender fails instead).
package notify
