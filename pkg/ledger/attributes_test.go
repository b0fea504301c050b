package ledger

import (
	"reflect"
	"strings"
	"testing"
)

// TestAttributeNamesMatchRecordTags: every attribute a condition or an
// update names is the one Record's field is stored under.
func TestAttributeNamesMatchRecordTags(t *testing.T) {
	fields := map[string]string{
		attrBucket: "Bucket", attrKey: "Key", attrVersionID: "VersionID", attrETag: "ETag",
		attrSize: "Size", attrContentType: "ContentType", attrStatus: "Status", attrPhase: "Phase",
		attrOwner: "Owner", attrLeaseUntil: "LeaseUntil", attrRetryable: "Retryable",
		attrDeadLetter: "DeadLetter", attrAttempts: "Attempts", attrErrorCode: "ErrorCode",
		attrErrorMessage: "ErrorMessage", attrCreatedAt: "CreatedAt", attrSlotAt: "SlotAt",
		attrContentSHA: "ContentSHA256", attrContentReq: "ContentRequest", attrReusedFrom: "ReusedFrom",
		attrRun: "Run",
	}
	rt := reflect.TypeFor[Record]()
	for attr, name := range fields {
		f, ok := rt.FieldByName(name)
		if !ok {
			t.Errorf("Record has no field %s (attribute %q)", name, attr)
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("dynamodbav"), ",")
		if tag != attr {
			t.Errorf("Record.%s is stored as %q, the constant says %q", name, tag, attr)
		}
	}
}
