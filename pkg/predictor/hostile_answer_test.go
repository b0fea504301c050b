package predictor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// maxLogLine is the bound docs/reliability.md states for one log line.
const maxLogLine = 16 << 10

// chargedAnswer is a 200 charging 2 credits with the given coordinates
// result fields.
func chargedAnswer(prediction string) string {
	return `{"message_code":"SUCCESS","data":{"prediction":{"result_type":"coordinates",` + prediction +
		`},"prediction_id":"6f1c2f2e-0000-4000-8000-000000000001","model_id":"global-v3","credits_consumed":2}}`
}

func answerCluster(lat, radius float64, name string) string {
	return fmt.Sprintf(`{"center":{"latitude":%g,"longitude":2.35},"location":{"name":%q,"admin1":%q,"country_code":"FR"},"radius_km":%g}`,
		lat, name, name, radius)
}

// TestChargedAnswerNeverLost: whatever a 200 holds, the photo's record is
// final with the answer's 2 credits; impossible locations are failed
// (malformed_response) with the raw body, never succeeded; strings and
// lists are cut, the cut is marked, and the item stays far under DynamoDB's
// 400 KB; a number DynamoDB cannot store gets the reduced record at once;
// no log line passes maxLogLine and none can be forged by a value.
func TestChargedAnswerNeverLost(t *testing.T) {
	forged := strings.Repeat("\n{\"level\":\"ERROR\",\"msg\":\"forged\"}\n", 96<<10/36)
	many := make([]string, 4000)
	for i := range many {
		many[i] = answerCluster(48.85, 1, "Paris")
	}
	big := strings.Repeat("Ü", 2000)
	props := make([]string, 30)
	for i := range props {
		props[i] = fmt.Sprintf(`{"name":%q,"location":%q,"country":%q,"category":%q,"address":%q,"coordinates":{"latitude":1,"longitude":2},"confidence":50}`,
			big, big, big, big, big)
	}
	everyBound := strings.Replace(chargedAnswer(`"predictions":[`+strings.Join(props, ",")+`]`), `"coordinates",`, `"property",`, 1)
	for name, tc := range map[string]struct {
		answer       string
		status, code string
	}{
		"latitude 1000":                  {chargedAnswer(`"clusters":[` + answerCluster(1000, 1, "Nowhere") + `]`), ledger.StatusFailed, CodeMalformedResponse},
		"latitude 1e308":                 {chargedAnswer(`"clusters":[` + answerCluster(1e308, 1, "Nowhere") + `]`), ledger.StatusFailed, CodeMalformedResponse},
		"radius 1e200":                   {chargedAnswer(`"clusters":[` + answerCluster(48.85, 1e200, "Paris") + `]`), ledger.StatusFailed, ledger.ErrorCodeResultNotStorable},
		"420 KB place name":              {chargedAnswer(`"clusters":[` + answerCluster(48.85, 1, strings.Repeat("P", 420<<10)) + `]`), ledger.StatusSucceeded, ""},
		"4,000 clusters":                 {chargedAnswer(`"clusters":[` + strings.Join(many, ",") + `]`), ledger.StatusSucceeded, ""},
		"property answer at every bound": {everyBound, ledger.StatusSucceeded, ""},
		"forged log fields":              {chargedAnswer(`"clusters":[` + answerCluster(48.85, 1, forged) + `]`), ledger.StatusSucceeded, ""},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.answer))
			}))
			t.Cleanup(srv.Close)
			e := newTestEnv(t, func(c *Config) { c.APIURL = srv.URL })
			u := e.put("photo.jpg", exiftest.JPEG(exiftest.Harbour().Bytes(), nil, 0))
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
				t.Fatalf("returned for retry: %v", failed)
			}
			rec := e.record(u)
			if rec.Status != tc.status || rec.ErrorCode != tc.code || rec.CreditsConsumed != 2 {
				t.Fatalf("record %s (%s: %s), %d credits; want %s (%s), 2 credits",
					rec.Status, rec.ErrorCode, rec.ErrorMessage, rec.CreditsConsumed, tc.status, tc.code)
			}
			if tc.code == CodeMalformedResponse && (rec.RawResult != tc.answer || rec.Latitude != nil) {
				t.Errorf("malformed answer: raw body %d bytes kept of %d, latitude %v", len(rec.RawResult), len(tc.answer), rec.Latitude)
			}
			if tc.status == ledger.StatusSucceeded && (rec.Truncated == "" || len(rec.Place) > 200 || len(rec.Clusters) > 20 || len(rec.Properties) > 20) {
				t.Errorf("nothing marked cut (%q), place %d bytes, %d clusters", rec.Truncated, len(rec.Place), len(rec.Clusters))
			}
			ref := ledger.ObjectRef{Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag}
			item, err := e.ddb.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.cfg.TableName),
				Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: ref.PartitionKey()},
					"sk": &types.AttributeValueMemberS{Value: ref.SortKey()}}})
			if err != nil || item.Item == nil {
				t.Fatalf("get item: %v", err)
			}
			size := bench.ItemSize(item.Item)
			t.Logf("record %d bytes", size)
			if size > 100<<10 {
				t.Errorf("record of %d bytes, want well under DynamoDB's 400 KB", size)
			}
			checkLogLines(t, e.logs.String())
		})
	}
}

// checkLogLines: every line is one JSON object within maxLogLine, at a real
// level, and no value forged a line or a field of its own.
func checkLogLines(t *testing.T, logs string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > maxLogLine {
			t.Errorf("log line of %d bytes: %.200s", len(line), line)
		}
		var fields map[string]any
		if err := json.Unmarshal(line, &fields); err != nil {
			t.Errorf("log line is not one JSON object (%v): %.200s", err, line)
			continue
		}
		if fields["msg"] == "forged" {
			t.Errorf("a value forged a log line: %.200s", line)
		}
	}
}
