package resultevents

import (
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
)

// The detail is built in Go by the pipe's enrichment function
// (functions/resultevents), never by substituting record values into a
// text template: AWS documents that a rule's input transformer does NOT
// escape the values it substitutes, and says nothing either way for Pipes,
// so a key or a place name with `"`, `\` or a control character (all legal
// in an S3 key) would make a template's output invalid JSON, which
// PutEvents refuses. encoding/json escapes every value, so the detail is
// valid JSON with every value exact whatever the pipe does with text.
//
// Schema version 1 is kept: every value is a string, as the stream carries
// it, and a value the record lacks (or holds with another type) is "", the
// one rendering under every reading (events/schema/ accepts exactly that).

// SchemaVersion is the layout of Detail; a change that is not an addition
// raises it.
const SchemaVersion = "1"

// Detail is the detail of a result event (events/schema/*.json). Of the
// photo's EXIF only the comparison is published, never its position
// (docs/privacy.md); nothing of the API key or of any header is in a record.
type Detail struct {
	SchemaVersion  string      `json:"schema_version"`
	EventID        string      `json:"event_id"`
	Bucket         string      `json:"bucket"`
	Key            string      `json:"key"`
	VersionID      string      `json:"version_id"`
	ETag           string      `json:"etag"`
	Status         string      `json:"status"`
	Reason         string      `json:"reason"`
	RecordedAt     string      `json:"recorded_at"`
	ModelID        string      `json:"model_id"`
	CreditsCharged string      `json:"credits_charged"`
	ReusedFrom     string      `json:"reused_from"`
	PositionSource string      `json:"position_source"`
	Place          DetailPlace `json:"place"`
	Exif           DetailExif  `json:"exif"`
	// Run is the reprocess run whose answer this is ("" for the original
	// upload); Previous the result it replaced (every field "" when none)
	// and MovedKM the great-circle distance from that result's position to
	// this one's. Additions to schema version 1.
	Run      string         `json:"run"`
	Previous DetailPrevious `json:"previous"`
	MovedKM  string         `json:"moved_km"`
}

// DetailPrevious is the result a reprocess run replaced.
type DetailPrevious struct {
	Run         string `json:"run"`
	ModelID     string `json:"model_id"`
	Name        string `json:"name"`
	CountryCode string `json:"country_code"`
	Latitude    string `json:"latitude"`
	Longitude   string `json:"longitude"`
	RadiusKM    string `json:"radius_km"`
	RecordedAt  string `json:"recorded_at"`
}

// DetailPlace is where the service (or the EXIF position) put the photo.
type DetailPlace struct {
	Name        string `json:"name"`
	Admin1      string `json:"admin1"`
	Admin2      string `json:"admin2"`
	CountryCode string `json:"country_code"`
	Latitude    string `json:"latitude"`
	Longitude   string `json:"longitude"`
	RadiusKM    string `json:"radius_km"`
	Confidence  string `json:"confidence"`
}

// DetailExif compares the prediction with the photo's own position.
type DetailExif struct {
	ErrorKM      string `json:"error_km"`
	PositionSent string `json:"position_sent"`
}

// Enriched is what the enrichment returns for one stream record: the
// detail, and the record's event type at the same path as in the stream
// record ($.dynamodb.NewImage.event_type.S), so the pipe's dynamic
// DetailType resolves to the same value whether Pipes reads it from the
// source record or from the enrichment's output (its documentation does not
// say which). The target's input template keeps only <$.detail>, a JSON
// object, which is inserted as JSON under every reading.
type Enriched struct {
	Detail   Detail        `json:"detail"`
	DynamoDB EnrichedImage `json:"dynamodb"`
}

// EnrichedImage carries the event type only.
type EnrichedImage struct {
	NewImage map[string]events.DynamoDBAttributeValue `json:"NewImage"`
}

// Enrich builds the output of each stream record, in order (Pipes pairs
// them by position).
func Enrich(records []events.DynamoDBEventRecord) []Enriched {
	out := make([]Enriched, 0, len(records))
	for _, r := range records {
		img := r.Change.NewImage
		out = append(out, Enriched{
			Detail: BuildDetail(r.EventID, img),
			DynamoDB: EnrichedImage{NewImage: map[string]events.DynamoDBAttributeValue{
				EventTypeAttribute: events.NewStringAttribute(str(img, EventTypeAttribute)),
			}},
		})
	}
	return out
}

// BuildDetail is the detail of a final record's new image.
func BuildDetail(eventID string, img map[string]events.DynamoDBAttributeValue) Detail {
	return Detail{
		SchemaVersion:  SchemaVersion,
		EventID:        eventID,
		Bucket:         str(img, "bucket"),
		Key:            str(img, "key"),
		VersionID:      str(img, "version_id"),
		ETag:           str(img, "etag"),
		Status:         str(img, StatusAttribute),
		Reason:         str(img, "error_code"),
		RecordedAt:     str(img, "updated_at"),
		ModelID:        str(img, "model_id"),
		CreditsCharged: creditsCharged(img),
		ReusedFrom:     str(img, "reused_from"),
		PositionSource: str(img, "source"),
		Place: DetailPlace{
			Name:        str(img, "place"),
			Admin1:      str(img, "admin1"),
			Admin2:      str(img, "admin2"),
			CountryCode: str(img, "country_code"),
			Latitude:    num(img, "latitude"),
			Longitude:   num(img, "longitude"),
			RadiusKM:    num(img, "radius_km"),
			Confidence:  num(img, "confidence"),
		},
		Exif: DetailExif{
			ErrorKM:      num(img, "error_km"),
			PositionSent: boolean(img, "position_sent"),
		},
		Run:      str(img, "run"),
		Previous: previous(img),
		MovedKM:  movedKM(img),
	}
}

// previous reads the record's previous result (ledger.HistoryEntry).
func previous(img map[string]events.DynamoDBAttributeValue) DetailPrevious {
	v, ok := img["previous"]
	if !ok || v.DataType() != events.DataTypeMap {
		return DetailPrevious{}
	}
	p := v.Map()
	return DetailPrevious{
		Run: str(p, "run"), ModelID: str(p, "model_id"), Name: str(p, "place"), CountryCode: str(p, "country_code"),
		Latitude: num(p, "latitude"), Longitude: num(p, "longitude"), RadiusKM: num(p, "radius_km"), RecordedAt: str(p, "at"),
	}
}

// movedKM is the distance from the previous result's position to the
// record's, in km to 3 decimals; "" unless both are known.
func movedKM(img map[string]events.DynamoDBAttributeValue) string {
	p := previous(img)
	vals := []string{p.Latitude, p.Longitude, num(img, "latitude"), num(img, "longitude")}
	var f [4]float64
	for i, v := range vals {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return ""
		}
		f[i] = x
	}
	return strconv.FormatFloat(geodist.Km(f[0], f[1], f[2], f[3]), 'f', 3, 64)
}

// creditsCharged is the record's credits; a copy that reused another
// object's answer paid nothing, which its record says by naming the payer
// (credits_consumed is then absent): "0", an exact value, not "absent".
func creditsCharged(img map[string]events.DynamoDBAttributeValue) string {
	if c := num(img, "credits_consumed"); c != "" || str(img, "reused_from") == "" {
		return c
	}
	return "0"
}

// str, num and boolean read an attribute of one type; absent, or of
// another type, is "" (the documented rendering of "no such value").
func str(img map[string]events.DynamoDBAttributeValue, name string) string {
	if v, ok := img[name]; ok && v.DataType() == events.DataTypeString {
		return v.String()
	}
	return ""
}

func num(img map[string]events.DynamoDBAttributeValue, name string) string {
	if v, ok := img[name]; ok && v.DataType() == events.DataTypeNumber {
		return v.Number()
	}
	return ""
}

func boolean(img map[string]events.DynamoDBAttributeValue, name string) string {
	if v, ok := img[name]; ok && v.DataType() == events.DataTypeBoolean {
		if v.Boolean() {
			return "true"
		}
		return "false"
	}
	return ""
}
