// Package pacer spaces the paid calls of every instance of the pipeline so
// that together they stay within the account's rate limit.
//
// The service limits calls per key, account-wide, and every authenticated
// call counts, a refused one included. Instances pacing themselves at R/N
// each drift out of step: two of them call in the same instant, the service
// answers 429, and the retry collides again. A Shared pacer keeps one
// schedule for all of them in the results table: one item holding the time
// of the next free slot and the current spacing. Taking a slot is one
// conditional UpdateItem that moves the schedule on by the spacing and
// returns the slot taken, so instances never need to agree on anything else.
// Above ItemRatePerMinute one item cannot take the writes, and the schedule
// is split into shards, items each at its share of the rate (shards.go).
//
// The spacing adapts: a 429 moves the schedule past the service's retry
// delay (every instance then waits, not only the one refused) and widens the
// spacing by the delay's share of it; each slot taken narrows it again by a
// small step, never below the configured rate. A rate configured above the
// real one converges to it; a correct one probes it gently.
//
// The service counts calls in whole seconds of its own clock, so the
// schedule spreads R slots over a minute and a margin (DefaultWindowMargin)
// while it does not know where those seconds begin. It learns that from the
// Date of the service's answers (Answered), shares the estimate in the same
// item, and once it is narrow enough aims every call well inside one
// of the service's seconds, with no margin (see phase.go). A 429, or an
// answer contradicting the estimate, drops it and brings the margin back.
//
// Instance is the per-instance alternative (a token bucket at R/N), kept for
// comparison and for deployments that cannot write to the table.
package pacer
