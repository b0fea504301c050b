package soak

import (
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// TestMissingCreditsConsumedIsNotRecordedAsFree: the contract makes
// data.credits_consumed part of every success envelope. A 200 answer that
// lacks it must not become a success that cost nothing (the service charged):
// it is a malformed response, final, never called again.
func TestMissingCreditsConsumedIsNotRecordedAsFree(t *testing.T) {
	const noCredits = `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[{"center":{"latitude":48.85,"longitude":2.35},"location":{"name":"Paris","admin1":"Ile-de-France","country_code":"FR"},"radius_km":3}],"processing_time_ms":12},"prediction_id":"0b7e3f4c-4b8e-4f55-9d59-0f1b9b1c2d3e","model_id":"geo-global-v2"}}`
	r := newRig(t, rigOptions{service: answer(func() []byte { return []byte(noCredits) })})
	obj := r.put("no-credits-field.jpg", uniqueJPEG(t, t.Name()))
	r.invokeOne(uploadEvent(t, obj))
	rec := r.record(obj)
	if rec == nil {
		t.Fatal("no record")
	}
	if rec.Status == ledger.StatusSucceeded && rec.CreditsConsumed == 0 {
		t.Errorf("a paid call whose answer omits credits_consumed is recorded as succeeded with 0 credits")
	}
	if rec.Status != ledger.StatusFailed || rec.ErrorCode != "malformed_response" || rec.Retryable {
		t.Errorf("record = %s/%s retryable=%v, want final failed/malformed_response", rec.Status, rec.ErrorCode, rec.Retryable)
	}
}
