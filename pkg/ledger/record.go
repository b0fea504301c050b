package ledger

import "time"

// Record statuses, named for what an operator must do:
//
//	in_progress  an attempt holds the object (or held it and vanished)
//	succeeded    done: the prediction is recorded
//	rejected     done: never sent to the service (not an image, too large...)
//	failed       final and needs a person (outcome_unknown, a 422...)
//	waiting      nothing charged; the object is processed again when its
//	             cause clears (out of credits, budget, 429, a storage error,
//	             the placeholder key...): error_code names the cause, and
//	             dead_letter says its message reached the dead-letter queue
//
// A record is claimable (Claim may start a paid call) when it is absent or
// Retryable: waiting records, and an ETag-keyed rejected/object_not_found
// (see ReasonObjectNotFound).
const (
	StatusInProgress = "in_progress"
	StatusSucceeded  = "succeeded"
	StatusRejected   = "rejected"
	StatusFailed     = "failed"
	StatusWaiting    = "waiting"
)

// Statuses lists every status, in the order Query reports them when asked
// for all.
var Statuses = []string{StatusInProgress, StatusWaiting, StatusSucceeded, StatusRejected, StatusFailed}

// ReasonObjectNotFound is the rejection reason of an object version that was
// deleted or replaced before it was processed. It is final only for a
// record keyed by a version id, which S3 never reuses. Keyed by ETag (an
// unversioned bucket), the same key and ETag come back when the same bytes
// are uploaded again, so such a rejection stays claimable and the re-upload
// is geolocated.
const ReasonObjectNotFound = "object_not_found"

// Sources of a record's position (Record.Source).
const (
	SourceService = "service"
	SourceEXIF    = "exif"
)

// PhaseCalling is the phase of an in-progress record: the claimer is (or
// was, if its lease expired) calling the paid service.
const PhaseCalling = "calling"

// ErrorCodeOutcomeUnknown is the error code MarkOutcomeUnknown sets: an
// attempt claimed the object and vanished, so the service may have charged.
const ErrorCodeOutcomeUnknown = "outcome_unknown"

// MaxRawResultBytes bounds RawResult; longer values are truncated on write.
const MaxRawResultBytes = 64 << 10

// MaxErrorMessageBytes bounds ErrorMessage; longer values are truncated on write.
const MaxErrorMessageBytes = 2 << 10

// ErrorCodeResultNotStorable is the error code of a charged result DynamoDB
// refused to store (an item over 400 KB, a number out of its range): the
// record is written again without the result, keeping its credits.
const ErrorCodeResultNotStorable = "result_not_storable"

// maxReducedRawBytes bounds the raw excerpt a reduced record keeps.
const maxReducedRawBytes = 4 << 10

// Record is one item of the results table: the state and, once succeeded,
// the result of one S3 object version.
type Record struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`

	Bucket      string `dynamodbav:"bucket"`
	Key         string `dynamodbav:"key"`
	VersionID   string `dynamodbav:"version_id,omitempty"`
	ETag        string `dynamodbav:"etag,omitempty"`
	Size        int64  `dynamodbav:"size,omitempty"`
	ContentType string `dynamodbav:"content_type,omitempty"`

	Status string `dynamodbav:"status"`
	// EventType is the detail type of the event the results pipe publishes
	// for a final status (resultevents.DetailType), written with the status;
	// empty while the record is not final.
	EventType string `dynamodbav:"event_type,omitempty"`
	// Phase is PhaseCalling while in progress, empty otherwise.
	Phase string `dynamodbav:"phase,omitempty"`
	// Owner is the token of the claim that last took the record. It stays
	// after Complete and Fail so that a retried write of the same claim is
	// idempotent.
	Owner string `dynamodbav:"owner,omitempty"`
	// LeaseUntil is when an in-progress claim stops blocking others (stored
	// in whole Unix seconds).
	LeaseUntil time.Time `dynamodbav:"lease_until,omitempty,unixtime"`
	// Retryable marks a claimable record: true means nothing was charged
	// for it, so the next delivery may claim again (waiting records, and
	// see ReasonObjectNotFound).
	Retryable bool `dynamodbav:"retryable,omitempty"`
	// DeadLetter says the object's message was returned on its last allowed
	// receive, so SQS moved it to the dead-letter queue: it is processed
	// again only when an operator redrives the queue (or re-uploads).
	DeadLetter bool `dynamodbav:"dead_letter,omitempty"`
	// Attempts counts the claims taken on this object version.
	Attempts int `dynamodbav:"attempts,omitempty"`
	// SlotAt is the call slot a waiting record holds in the shared
	// schedule: its message was returned to the queue to come back at it,
	// and the delivery that does calls then, without taking a new one
	// (Release). Zero when none is held.
	SlotAt time.Time `dynamodbav:"slot_at,omitempty"`

	ModelID          string `dynamodbav:"model_id,omitempty"`
	RequestedModelID string `dynamodbav:"requested_model_id,omitempty"`
	Fallback         bool   `dynamodbav:"fallback,omitempty"`
	PredictionID     string `dynamodbav:"prediction_id,omitempty"`
	CreditsConsumed  int    `dynamodbav:"credits_consumed,omitempty"`
	// CreditsReported is the answer's credits_consumed as the service sent
	// it when it could not be a charge (negative, fractional, not a JSON
	// number, over geoapi.MaxCreditsConsumed), at most 200 bytes, and
	// CreditsInvalid says why; CreditsConsumed then holds what the call
	// reserved, which the daily budget and a run's cap counted.
	CreditsReported string `dynamodbav:"credits_reported,omitempty"`
	CreditsInvalid  string `dynamodbav:"credits_invalid,omitempty"`
	ResultType      string `dynamodbav:"result_type,omitempty"`

	// The top location, flattened for easy reading and querying.
	Place       string   `dynamodbav:"place,omitempty"`
	Admin1      string   `dynamodbav:"admin1,omitempty"`
	Admin2      string   `dynamodbav:"admin2,omitempty"`
	CountryCode string   `dynamodbav:"country_code,omitempty"`
	Latitude    *float64 `dynamodbav:"latitude,omitempty"`
	Longitude   *float64 `dynamodbav:"longitude,omitempty"`
	RadiusKM    *float64 `dynamodbav:"radius_km,omitempty"`
	Confidence  *float64 `dynamodbav:"confidence,omitempty"`
	HeadingDeg  *float64 `dynamodbav:"heading_deg,omitempty"` // camera heading of a high-accuracy top prediction

	Clusters    []Cluster    `dynamodbav:"clusters,omitempty"`
	Predictions []Prediction `dynamodbav:"predictions,omitempty"`
	// Vehicles and Properties are the matches of a vehicle or property
	// result, typed where the predictor knows their fields.
	Vehicles   []Vehicle  `dynamodbav:"vehicles,omitempty"`
	Properties []Property `dynamodbav:"properties,omitempty"`
	// RawResult keeps the service's result verbatim when its result_type is
	// not coordinates or accuracy (vehicle, property, or one the predictor
	// does not know), bounded by MaxRawResultBytes.
	RawResult string `dynamodbav:"raw_result,omitempty"`
	// Truncated says which of the service's strings and lists were cut
	// before they were stored (geoapi.Result.Truncated), or is empty.
	Truncated string `dynamodbav:"truncated,omitempty"`

	ProcessingMS int64 `dynamodbav:"processing_ms,omitempty"`
	RoundTripMS  int64 `dynamodbav:"round_trip_ms,omitempty"`

	// Source is where Latitude and Longitude come from: SourceService (a
	// paid prediction) or SourceEXIF (the photo's own GPS position recorded
	// without a call, exifGps=skip). Empty on records written before it.
	Source string `dynamodbav:"source,omitempty"`

	// What the photo's EXIF block says, read from the head of the same
	// stream that was uploaded. The position is set only when it passed
	// every validity rule (photoexif); ExifGPSProblem says why it is absent
	// (a photoexif reason: no_exif, no_gps, gps_null_island,
	// exif_beyond_head...).
	ExifLatitude     *float64 `dynamodbav:"exif_latitude,omitempty"`
	ExifLongitude    *float64 `dynamodbav:"exif_longitude,omitempty"`
	ExifAltitudeM    *float64 `dynamodbav:"exif_altitude_m,omitempty"`
	ExifDirectionDeg *float64 `dynamodbav:"exif_direction_deg,omitempty"`
	ExifGPSProblem   string   `dynamodbav:"exif_gps_problem,omitempty"`
	// CapturedAt is when the photo was taken: RFC 3339 with the offset EXIF
	// gives ("2024-05-01T19:42:10+02:00"), or the camera's wall clock with
	// no offset ("2024-05-01T19:42:10") when EXIF has none.
	CapturedAt  string `dynamodbav:"captured_at,omitempty"`
	CameraMake  string `dynamodbav:"camera_make,omitempty"`
	CameraModel string `dynamodbav:"camera_model,omitempty"`
	// ErrorKm is the great-circle distance in km from the top prediction to
	// the EXIF position, for a prediction of a photo that has one.
	ErrorKm *float64 `dynamodbav:"error_km,omitempty"`

	// Downscaled says the object was over the size limit and a re-encoded
	// JPEG of SentWidth x SentHeight, SentBytes long, was sent instead; Size
	// stays the object's, OriginalWidth x OriginalHeight its pixels.
	Downscaled     bool  `dynamodbav:"downscaled,omitempty"`
	OriginalWidth  int   `dynamodbav:"original_width,omitempty"`
	OriginalHeight int   `dynamodbav:"original_height,omitempty"`
	SentBytes      int64 `dynamodbav:"sent_bytes,omitempty"`
	SentWidth      int   `dynamodbav:"sent_width,omitempty"`
	SentHeight     int   `dynamodbav:"sent_height,omitempty"`

	// UploadMetadata is what reached the service of the photo's metadata:
	// "strip" (blanked in the stream, MetadataRemoved says what) or "keep"
	// (sent as stored). Empty on records written before it.
	UploadMetadata string `dynamodbav:"upload_metadata,omitempty"`
	// MetadataRemoved is what was blanked, kind -> bytes (exif, xmp, iptc,
	// comment, text, time, trailer, other, junk, unread).
	MetadataRemoved map[string]int64 `dynamodbav:"metadata_removed,omitempty"`
	// PositionSent says the upload carried the photo's EXIF position
	// (uploadMetadata=keep): its ErrorKm is not computed, since the service
	// could have read the answer off the file.
	PositionSent bool `dynamodbav:"position_sent,omitempty"`

	// ContentSHA256 and ContentRequest are the content identity of what
	// the service was asked (ContentRef): set on an answer that can be
	// reused for another object with the same content and request. An
	// answer copied from another object names it in ReusedFrom
	// (ObjectRef.String) and charged no credits.
	ContentSHA256  string `dynamodbav:"content_sha256,omitempty"`
	ContentRequest string `dynamodbav:"content_request,omitempty"`
	ReusedFrom     string `dynamodbav:"reused_from,omitempty"`

	// Run is the reprocess run of the record (ObjectRef.Run); empty for
	// run 0, the original upload. Previous is the result this run's
	// replaced as the object version's latest, and History every earlier
	// result, oldest first, at most MaxHistory of them (see run.go).
	Run      string         `dynamodbav:"run,omitempty"`
	Previous *HistoryEntry  `dynamodbav:"previous,omitempty"`
	History  []HistoryEntry `dynamodbav:"history,omitempty"`

	// ErrorCode and ErrorMessage explain a failed record, or the reason and
	// detail of a rejected one.
	ErrorCode    string `dynamodbav:"error_code,omitempty"`
	ErrorMessage string `dynamodbav:"error_message,omitempty"`

	CreatedAt time.Time `dynamodbav:"created_at,omitempty"`
	// UpdatedAt is the by-status index sort key.
	UpdatedAt time.Time `dynamodbav:"updated_at,omitempty"`
	// StatusDay is "<status>#YYYY-MM-DD" (UTC day of UpdatedAt), the
	// by-status index partition key.
	StatusDay string `dynamodbav:"status_day,omitempty"`
	// ExpiresAt is the DynamoDB TTL; zero when records do not expire.
	ExpiresAt time.Time `dynamodbav:"expires_at,omitempty,unixtime"`
}

// Final reports whether the record is in a state no claim can leave.
func (r *Record) Final() bool {
	switch r.Status {
	case StatusSucceeded:
		return true
	case StatusRejected, StatusFailed:
		// A failed record written before the waiting status existed may be
		// retryable too.
		return !r.Retryable
	}
	return false
}

// Versioned reports whether the ref names an S3 version id, which S3 never
// reuses, rather than falling back to the ETag.
func (r ObjectRef) Versioned() bool { return r.VersionID != "" && r.VersionID != "null" }

// Cluster is one location cluster of a global-model result.
type Cluster struct {
	Latitude    float64  `dynamodbav:"latitude"`
	Longitude   float64  `dynamodbav:"longitude"`
	Name        string   `dynamodbav:"name,omitempty"`
	Admin1      string   `dynamodbav:"admin1,omitempty"`
	Admin2      string   `dynamodbav:"admin2,omitempty"`
	CountryCode string   `dynamodbav:"country_code,omitempty"`
	RadiusKM    *float64 `dynamodbav:"radius_km,omitempty"`
	Confidence  *float64 `dynamodbav:"confidence,omitempty"`
}

// Vehicle is one match of a vehicle result.
type Vehicle struct {
	Make              string  `dynamodbav:"make,omitempty"`
	Model             string  `dynamodbav:"model,omitempty"`
	Year              string  `dynamodbav:"year,omitempty"`
	ConfidencePercent float64 `dynamodbav:"confidence_pct"` // 0 to 100
	Variant           string  `dynamodbav:"variant,omitempty"`
}

// Property is one match of a property (hotel, rental) result.
type Property struct {
	Name              string   `dynamodbav:"name,omitempty"`
	Location          string   `dynamodbav:"location,omitempty"` // a description, "Roppongi Hills, Tokyo"
	Country           string   `dynamodbav:"country,omitempty"`  // a name, not a code
	Latitude          *float64 `dynamodbav:"latitude,omitempty"`
	Longitude         *float64 `dynamodbav:"longitude,omitempty"`
	ConfidencePercent float64  `dynamodbav:"confidence_pct"` // 0 to 100
	Category          string   `dynamodbav:"category,omitempty"`
	Address           string   `dynamodbav:"address,omitempty"`
}

// Prediction is one ranked point of a high-accuracy result.
type Prediction struct {
	Rank        int      `dynamodbav:"rank"`
	Latitude    float64  `dynamodbav:"latitude"`
	Longitude   float64  `dynamodbav:"longitude"`
	Confidence  float64  `dynamodbav:"confidence"`
	Name        string   `dynamodbav:"name,omitempty"`
	Admin1      string   `dynamodbav:"admin1,omitempty"`
	Admin2      string   `dynamodbav:"admin2,omitempty"`
	CountryCode string   `dynamodbav:"country_code,omitempty"`
	HeadingDeg  *float64 `dynamodbav:"heading_deg,omitempty"`
}
