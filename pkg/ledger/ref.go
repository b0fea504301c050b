package ledger

import (
	"errors"
	"strings"
)

// ObjectRef identifies one S3 object version. Key is the decoded object key
// (S3 event notifications URL-encode it; decode before building a ref).
type ObjectRef struct {
	Bucket    string
	Key       string
	VersionID string
	ETag      string
	// Run names the reprocess run the record belongs to (see run.go); empty
	// for run 0, the original upload, whose keys are unchanged.
	Run string
}

// ObjectInfo is what is known about an object without calling the service.
type ObjectInfo struct {
	Size        int64
	ContentType string
	// Content, on RejectClaimed, marks the rejection as the service's
	// verdict on that content, reusable for its copies (ClaimContent);
	// ReusedFrom says the rejection was copied from another object's.
	Content    *ContentRef
	ReusedFrom string
}

// PartitionKey is the record's pk: "OBJ#<bucket>#<key>".
func (r ObjectRef) PartitionKey() string {
	return "OBJ#" + r.Bucket + "#" + r.Key
}

// SortKey is the record's sk: "V#" followed by the version id, else the ETag
// without quotes, else "null". A version id of "null" (what S3 reports for
// objects written while versioning is off or suspended) does not identify a
// version, so the ETag is preferred over it: an overwritten object gets a
// record of its own.
//
// A run other than run 0 appends RunSortKeySeparator and the run's name, so
// each (object version, run) is a record of its own in the object's
// partition, claimed and finished by the same code as run 0's.
func (r ObjectRef) SortKey() string {
	return r.VersionSortKey() + runSuffix(r.Run)
}

// VersionSortKey is the sort key of the object version's run 0 record.
func (r ObjectRef) VersionSortKey() string {
	if r.Versioned() {
		return "V#" + r.VersionID
	}
	if etag := strings.Trim(r.ETag, `"`); etag != "" {
		return "V#" + etag
	}
	return "V#null"
}

func (r ObjectRef) validate() error {
	if r.Bucket == "" {
		return errors.New("object ref has no bucket")
	}
	if r.Key == "" {
		return errors.New("object ref has no key")
	}
	if r.Run != "" {
		return ValidateRunName(r.Run)
	}
	return nil
}

// String names the object for logs and errors.
func (r ObjectRef) String() string {
	s := "s3://" + r.Bucket + "/" + r.Key + " (" + strings.TrimPrefix(r.VersionSortKey(), "V#") + ")"
	if r.Run != "" {
		s += " run " + r.Run
	}
	return s
}
