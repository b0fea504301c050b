package soak

import (
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// TestSecurity walks the paths where a key is most likely to leak, the
// refusals and the rotations, with every log at debug level, then greps
// everything produced (the handler's, the client's and the simulator's log
// lines, the metrics, every record) for every key value used. Every other
// test of the package makes the same check on its own output when it ends
// (rig.assertNoKeyLeaked).
func TestSecurity(t *testing.T) {
	r := newRig(t, rigOptions{logLevel: "debug"})
	deliver := func(name string) *ledger.Record {
		t.Helper()
		obj := r.put(name, uniqueJPEG(t, name))
		r.invokeOne(uploadEvent(t, obj))
		return r.record(obj)
	}

	if rec := deliver("before-rotation.jpg"); rec == nil || rec.Status != ledger.StatusSucceeded {
		t.Fatalf("first upload: %+v, want succeeded", rec)
	}

	// Rotation done right: regenerated, and the secret updated. The cached
	// key is refused once, then the fresh one works.
	r.rotateKey()
	if rec := deliver("after-rotation.jpg"); rec == nil || rec.Status != ledger.StatusSucceeded {
		t.Fatalf("after rotation: %+v, want succeeded", rec)
	}

	// Rotation done wrong: regenerated, the secret not updated. Refused
	// twice, recorded as a retryable failure with the service's message.
	values := r.secret.Values()
	orphan := r.sim.RegenerateKey(values[len(values)-1])
	rec := deliver("secret-not-updated.jpg")
	if rec == nil || rec.ErrorCode != predictor.CodeUnauthorized || !rec.Retryable {
		t.Fatalf("stale secret: %+v, want a retryable unauthorized failure", rec)
	}
	if rec.ErrorMessage == "" {
		t.Error("the unauthorized failure has no message")
	}

	// The secret fixed; then the account runs out of credits.
	r.secret.Rotate(orphan)
	r.sim.AddAccount(simOrg, 0, 0)
	// Past the provider's refresh rate limit, so the fixed secret is read.
	time.Sleep(100 * time.Millisecond)
	rec = deliver("no-credits.jpg")
	if rec == nil || rec.ErrorCode != predictor.CodeOutOfCredits {
		t.Fatalf("no credits: %+v, want an out_of_credits failure", rec)
	}

	// The risky paths did run and log.
	logs := r.logs.String()
	for _, msg := range []string{
		"API key refused: retrying once with the refreshed key",
		"API key refused and the secret still holds the same key",
		"out of credits",
	} {
		if !strings.Contains(logs, msg) {
			t.Errorf("no log line says %q: the path was not exercised", msg)
		}
	}

	keys := append(r.keys(), orphan, firstKey)
	everything := logs + r.metrics.String() + r.scanTable()
	if len(everything) < 1000 {
		t.Fatalf("only %d bytes of logs and records: the grep would prove nothing", len(everything))
	}
	for _, k := range keys {
		if n := strings.Count(everything, k); n > 0 {
			t.Errorf("a key appears %d times in the logs, metrics or records", n)
		}
	}
	// The key's distinctive part must not appear either (a truncated or
	// re-encoded key is still a leak).
	for _, k := range keys {
		if tail := k[len(k)-12:]; strings.Contains(everything, tail) {
			t.Errorf("the end of a key appears in the logs, metrics or records")
		}
	}
}
