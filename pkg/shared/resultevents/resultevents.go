// Package resultevents names what the results pipe publishes: every record
// that reaches a final status becomes one EventBridge event, carried from
// the results table's stream by an EventBridge Pipe (infra/events.go) and
// never put beside the table write. The ledger writes EventTypeAttribute in
// the same write that sets the final status; the pipe's filter, its input
// template and the local rig read these names, so the three cannot drift.
// The contract for consumers is docs/events.md and events/schema/.
package resultevents

// Source is the source of every result event.
const Source = "geolocate"

// EnrichmentMemoryMB is the enrichment function's memory size (the stack
// deploys it with this; cmd/benchreport prices it): it does no I/O, and
// the smallest size Lambda offers is plenty for a batch of 10 records.
const EnrichmentMemoryMB = 128

// PipeBatchSize is the most stream records the results pipe hands the
// enrichment, and events it puts on the bus, at once: PutEvents takes at
// most 10 entries (the stack deploys the pipe with it; cmd/benchreport
// prices the enrichment's batches by it).
const PipeBatchSize = 10

// Detail types, one per final status.
const (
	DetailTypeGeolocated = "Photo Geolocated"
	DetailTypeRejected   = "Photo Rejected"
	DetailTypeFailed     = "Photo Failed"
)

// EventTypeAttribute is the record attribute holding the detail type of its
// final status, absent while the record is not final. The pipe takes the
// event's detail-type from it: a pipe's dynamic target parameters can only
// copy a value of the record, not map the status to a name.
const EventTypeAttribute = "event_type"

// The record attributes the pipe's filter reads.
const (
	StatusAttribute = "status"
	// RecordKeyPrefix starts the partition key of every object record
	// (ledger.ObjectRef.PartitionKey); pacer and budget items have others.
	RecordKeyPrefix = "OBJ#"
)

// Final statuses of a record (ledger.StatusSucceeded, StatusRejected and
// StatusFailed; the ledger's tests check they agree).
const (
	StatusSucceeded = "succeeded"
	StatusRejected  = "rejected"
	StatusFailed    = "failed"
)

// FinalStatuses lists the final statuses in the order the pipe's filters
// are written.
var FinalStatuses = []string{StatusSucceeded, StatusRejected, StatusFailed}

// DetailType returns the detail type of a final status, "" for any other.
func DetailType(status string) string {
	switch status {
	case StatusSucceeded:
		return DetailTypeGeolocated
	case StatusRejected:
		return DetailTypeRejected
	case StatusFailed:
		return DetailTypeFailed
	}
	return ""
}
