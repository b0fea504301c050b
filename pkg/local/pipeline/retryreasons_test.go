package pipeline

import (
	"fmt"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

func TestRetryReasonsSayWhyAndSpotHopelessRuns(t *testing.T) {
	r := newRetryReasons()
	write := func(lines ...string) {
		t.Helper()
		for _, l := range lines {
			// Split across writes, as a pipe may deliver them.
			if _, err := r.Write([]byte(l[:len(l)/2])); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Write([]byte(l[len(l)/2:] + "\n")); err != nil {
				t.Fatal(err)
			}
		}
	}
	callFailed := func(id string) string {
		return fmt.Sprintf(`{"level":"WARN","msg":"call failed, nothing charged: the object waits and its message is returned for retry","message_id":%q,"code":%q,"error":"geoapi: predict: transport: Post \"http://127.0.0.1:8080/v1/prediction/predict\": dial tcp 127.0.0.1:8080: connect: connection refused"}`,
			id, predictor.CodeTransport)
	}
	write(callFailed("m1"), callFailed("m2"),
		`{"level":"WARN","msg":"no call slot: message returned for retry","message_id":"m3"}`,
		`{"_aws":{"CloudWatchMetrics":[]},"ImagesRetried":1}`, "not json at all")
	if got, want := r.take([]string{"m1", "m2", "m3", "m4"}),
		"cause not in the functions' logs at their GEO_LOG_LEVEL (1); no call slot (1); transport_error: connection refused (2)"; got != want {
		t.Errorf("take = %q, want %q", got, want)
	}
	if got := r.take([]string{"m1"}); got != "cause not in the functions' logs at their GEO_LOG_LEVEL" {
		t.Errorf("a taken cause is forgotten: take = %q", got)
	}
	if _, ok := r.hopeless(); ok {
		t.Fatalf("hopeless after 2 failed calls, limit %d", sameFailureLimit)
	}
	// A recorded prediction breaks the streak; pacing waits never count.
	write(`{"level":"INFO","msg":"prediction recorded","message_id":"m5"}`)
	for i := range sameFailureLimit - 1 {
		write(callFailed(fmt.Sprint("n", i)),
			fmt.Sprintf(`{"level":"WARN","msg":"call failed","message_id":"w%d","code":%q}`, i, predictor.CodeRateLimited))
	}
	if _, ok := r.hopeless(); ok {
		t.Fatalf("hopeless after %d failed calls since a success", sameFailureLimit-1)
	}
	write(callFailed("last"))
	if cause, ok := r.hopeless(); !ok || cause != predictor.CodeTransport+": connection refused" {
		t.Errorf("hopeless = %q, %v; want the transport cause after %d alike", cause, ok, sameFailureLimit)
	}
}
