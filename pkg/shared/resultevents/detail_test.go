package resultevents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// Enrich keeps the records' order and puts each record's event type where
// the pipe's dynamic DetailType reads it; a value of an unexpected type is
// "" like an absent one, and nothing of the EXIF position is published.
func TestEnrich(t *testing.T) {
	batch := `[
	 {"eventID":"e1","dynamodb":{"NewImage":{"key":{"S":"a\"b\\c\n.jpg"},"status":{"S":"succeeded"},"event_type":{"S":"Photo Geolocated"},
	   "latitude":{"N":"48.8566"},"position_sent":{"BOOL":true},"exif_latitude":{"N":"1.5"},"exif_longitude":{"N":"2.5"},"place":{"N":"7"}}}},
	 {"eventID":"e2","dynamodb":{"NewImage":{"key":{"S":"notes.txt"},"status":{"S":"rejected"},"event_type":{"S":"Photo Rejected"},"error_code":{"S":"not_an_image"}}}}
	]`
	var records []events.DynamoDBEventRecord
	if err := json.Unmarshal([]byte(batch), &records); err != nil {
		t.Fatal(err)
	}
	out := Enrich(records)
	if len(out) != 2 {
		t.Fatalf("%d outputs for 2 records", len(out))
	}
	first, second := out[0], out[1]
	if first.Detail.EventID != "e1" || first.Detail.Key != "a\"b\\c\n.jpg" || first.Detail.Place.Latitude != "48.8566" ||
		first.Detail.Exif.PositionSent != "true" || first.Detail.Place.Name != "" || first.Detail.SchemaVersion != SchemaVersion {
		t.Errorf("first detail %+v", first.Detail)
	}
	if second.Detail.Reason != "not_an_image" || second.Detail.Place.Latitude != "" || second.Detail.Exif.PositionSent != "" {
		t.Errorf("second detail %+v", second.Detail)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back []struct {
		DynamoDB struct {
			NewImage struct {
				EventType struct{ S string } `json:"event_type"`
			}
		} `json:"dynamodb"`
	}
	if err := json.Unmarshal(raw, &back); err != nil || back[0].DynamoDB.NewImage.EventType.S != DetailTypeGeolocated ||
		back[1].DynamoDB.NewImage.EventType.S != DetailTypeRejected {
		t.Errorf("event types at $.dynamodb.NewImage.event_type.S: %s (%v)", raw, err)
	}
	if strings.Contains(string(raw), "1.5") || strings.Contains(string(raw), "exif_l") {
		t.Errorf("the EXIF position is published: %s", raw)
	}
}

// A copy that reused another object's answer names its payer and was
// charged "0" (its record holds no credits_consumed); a record that paid
// shows its own credits, and one that names no payer and holds no credits
// says "" (nothing charged, or not known).
func TestDetailOfAReusedAnswer(t *testing.T) {
	for _, c := range []struct {
		name       string
		img        map[string]events.DynamoDBAttributeValue
		credits    string
		reusedFrom string
	}{
		{"copy", map[string]events.DynamoDBAttributeValue{"reused_from": events.NewStringAttribute("s3://b/a.jpg (v1)")}, "0", "s3://b/a.jpg (v1)"},
		{"payer", map[string]events.DynamoDBAttributeValue{"credits_consumed": events.NewNumberAttribute("2")}, "2", ""},
		{"unknown", map[string]events.DynamoDBAttributeValue{}, "", ""},
	} {
		d := BuildDetail("e", c.img)
		if d.CreditsCharged != c.credits || d.ReusedFrom != c.reusedFrom {
			t.Errorf("%s: credits_charged %q reused_from %q, want %q %q", c.name, d.CreditsCharged, d.ReusedFrom, c.credits, c.reusedFrom)
		}
	}
}

// A reprocess run's result carries its run, the result it replaced and how
// far it moved; the original upload's carries "" for all three.
func TestDetailOfARun(t *testing.T) {
	img := map[string]events.DynamoDBAttributeValue{
		"run":       events.NewStringAttribute("newer"),
		"latitude":  events.NewNumberAttribute("46.2044"),
		"longitude": events.NewNumberAttribute("6.1432"),
		"previous": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
			"place": events.NewStringAttribute("Lyon"), "country_code": events.NewStringAttribute("FR"),
			"model_id": events.NewStringAttribute("global_v0.1"), "at": events.NewStringAttribute("2026-11-20T10:00:00.000000000Z"),
			"latitude": events.NewNumberAttribute("45.7640"), "longitude": events.NewNumberAttribute("4.8357"),
		}),
	}
	d := BuildDetail("e", img)
	if d.Run != "newer" || d.Previous.Name != "Lyon" || d.Previous.Run != "" || d.Previous.ModelID != "global_v0.1" || d.Previous.Latitude != "45.7640" {
		t.Errorf("detail %+v", d)
	}
	// Lyon to Geneva is about 112 km.
	if d.MovedKM < "111" || d.MovedKM > "113" || !strings.Contains(d.MovedKM, ".") {
		t.Errorf("moved_km %q, want about 112", d.MovedKM)
	}
	if zero := BuildDetail("e", map[string]events.DynamoDBAttributeValue{"latitude": events.NewNumberAttribute("1")}); zero.Run != "" || zero.MovedKM != "" || zero.Previous != (DetailPrevious{}) {
		t.Errorf("run 0 detail %+v", zero)
	}
}
