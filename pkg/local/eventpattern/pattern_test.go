package eventpattern

import (
	"strings"
	"testing"
)

// A DynamoDB stream record as Pipes filters it, and an EventBridge event as
// a rule sees it.
const (
	modifyRecord = `{"eventName":"MODIFY","dynamodb":{"Keys":{"pk":{"S":"OBJ#b#k.jpg"}},
		"NewImage":{"status":{"S":"succeeded"},"event_type":{"S":"Photo Geolocated"},"credits":{"N":"1"}},
		"OldImage":{"status":{"S":"in_progress"}}}}`
	insertRecord = `{"eventName":"INSERT","dynamodb":{"Keys":{"pk":{"S":"OBJ#b#notes.txt"}},
		"NewImage":{"status":{"S":"rejected"},"event_type":{"S":"Photo Rejected"}}}}`
	geolocated = `{"source":"geolocate","detail-type":"Photo Geolocated","resources":["arn:aws:dynamodb:eu-west-1:1:table/t"],
		"detail":{"place":{"country_code":"FR","latitude":"48.85"},"score":7,"tags":["a","b"],"none":null,"flag":true,"empty":[]}}`
)

func TestMatch(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		event   string
		want    bool
	}{
		// Exact values, nested objects.
		{"exact nested", `{"detail":{"place":{"country_code":["FR"]}}}`, geolocated, true},
		{"exact other value", `{"detail":{"place":{"country_code":["DE","IT"]}}}`, geolocated, false},
		{"one of several", `{"detail-type":["Photo Rejected","Photo Geolocated"]}`, geolocated, true},
		{"every field must match", `{"source":["geolocate"],"detail-type":["Photo Failed"]}`, geolocated, false},
		{"absent field", `{"detail":{"missing":["x"]}}`, geolocated, false},
		{"absent parent", `{"nothing":{"here":["x"]}}`, geolocated, false},
		{"value is an object, not a leaf", `{"detail":["x"]}`, geolocated, false},
		{"array value: any element", `{"detail":{"tags":["b"]}}`, geolocated, true},
		{"array value: no element", `{"detail":{"tags":["c"]}}`, geolocated, false},
		{"resources array", `{"resources":["arn:aws:dynamodb:eu-west-1:1:table/t"]}`, geolocated, true},
		{"number compared as a number", `{"detail":{"score":[7.0]}}`, geolocated, true},
		{"number is not its string", `{"detail":{"score":["7"]}}`, geolocated, false},
		{"string is not a number", `{"detail":{"place":{"latitude":[48.85]}}}`, geolocated, false},
		{"null", `{"detail":{"none":[null]}}`, geolocated, true},
		{"null is not absent", `{"detail":{"missing":[null]}}`, geolocated, false},
		{"boolean", `{"detail":{"flag":[true]}}`, geolocated, true},
		{"boolean false", `{"detail":{"flag":[false]}}`, geolocated, false},

		// prefix, suffix, equals-ignore-case, wildcard.
		{"prefix", `{"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"OBJ#"}]}}}}`, modifyRecord, true},
		{"prefix not", `{"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"PACE#"}]}}}}`, modifyRecord, false},
		{"prefix ignore case", `{"dynamodb":{"Keys":{"pk":{"S":[{"prefix":{"equals-ignore-case":"obj#"}}]}}}}`, modifyRecord, true},
		{"suffix", `{"dynamodb":{"Keys":{"pk":{"S":[{"suffix":".jpg"}]}}}}`, modifyRecord, true},
		{"suffix not", `{"dynamodb":{"Keys":{"pk":{"S":[{"suffix":".png"}]}}}}`, modifyRecord, false},
		{"equals-ignore-case", `{"source":[{"equals-ignore-case":"GeoLocate"}]}`, geolocated, true},
		{"wildcard", `{"dynamodb":{"Keys":{"pk":{"S":[{"wildcard":"OBJ#*.jpg"}]}}}}`, modifyRecord, true},
		{"wildcard not", `{"dynamodb":{"Keys":{"pk":{"S":[{"wildcard":"OBJ#*.png"}]}}}}`, modifyRecord, false},
		{"prefix on a number", `{"detail":{"score":[{"prefix":"7"}]}}`, geolocated, false},
		// A wildcard is read by character: é is two bytes.
		{"wildcard non-ASCII", `{"detail":{"object":{"key":[{"wildcard":"été/*.jpg"}]}}}`, `{"detail":{"object":{"key":"été/a b.jpg"}}}`, true},
		{"wildcard non-ASCII not", `{"detail":{"object":{"key":[{"wildcard":"été/*.jpg"}]}}}`, `{"detail":{"object":{"key":"ete/a.jpg"}}}`, false},
		{"wildcard escaped non-ASCII", `{"detail":{"object":{"key":[{"wildcard":"\\été*"}]}}}`, `{"detail":{"object":{"key":"été/x"}}}`, true},
		{"one of two readings", `{"detail":{"object":{"key":[{"prefix":"Photos 2024/"},{"prefix":"Photos+2024/"}]}}}`, `{"detail":{"object":{"key":"Photos+2024/x.jpg"}}}`, true},

		// anything-but.
		{"anything-but other", `{"dynamodb":{"OldImage":{"status":{"S":[{"anything-but":["succeeded"]}]}}}}`, modifyRecord, true},
		{"anything-but same", `{"dynamodb":{"NewImage":{"status":{"S":[{"anything-but":["succeeded"]}]}}}}`, modifyRecord, false},
		{"anything-but a string", `{"dynamodb":{"NewImage":{"status":{"S":[{"anything-but":"failed"}]}}}}`, modifyRecord, true},
		{"anything-but needs the field", `{"dynamodb":{"OldImage":{"status":{"S":[{"anything-but":["succeeded"]}]}}}}`, insertRecord, false},
		{"anything-but prefix", `{"dynamodb":{"Keys":{"pk":{"S":[{"anything-but":{"prefix":"OBJ#"}}]}}}}`, modifyRecord, false},
		{"anything-but number", `{"detail":{"score":[{"anything-but":[1,2]}]}}`, geolocated, true},

		// exists.
		{"exists true", `{"dynamodb":{"NewImage":{"event_type":{"S":[{"exists":true}]}}}}`, modifyRecord, true},
		{"exists true absent", `{"dynamodb":{"OldImage":{"event_type":{"S":[{"exists":true}]}}}}`, modifyRecord, false},
		{"exists false absent", `{"dynamodb":{"OldImage":{"event_type":{"S":[{"exists":false}]}}}}`, modifyRecord, true},
		{"exists false, parent absent", `{"dynamodb":{"OldImage":{"status":{"S":[{"exists":false}]}}}}`, insertRecord, true},
		{"exists false present", `{"dynamodb":{"NewImage":{"status":{"S":[{"exists":false}]}}}}`, modifyRecord, false},
		{"exists on an empty array", `{"detail":{"empty":[{"exists":true}]}}`, geolocated, true},
		{"an empty array has no element", `{"detail":{"empty":["x"]}}`, geolocated, false},

		// numeric.
		{"numeric range", `{"detail":{"score":[{"numeric":[">",5,"<=",7]}]}}`, geolocated, true},
		{"numeric outside", `{"detail":{"score":[{"numeric":[">",7]}]}}`, geolocated, false},
		{"numeric on a string", `{"detail":{"place":{"latitude":[{"numeric":[">",0]}]}}}`, geolocated, false},

		// $or.
		{"$or one matches", `{"$or":[{"source":["x"]},{"detail-type":["Photo Geolocated"]}]}`, geolocated, true},
		{"$or none matches", `{"$or":[{"source":["x"]},{"detail-type":["y"]}]}`, geolocated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile([]byte(tt.pattern))
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.MatchJSON([]byte(tt.event))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("%s on %s = %t, want %t", tt.pattern, strings.Join(strings.Fields(tt.event), " "), got, tt.want)
			}
		})
	}
}

// An operator the matcher does not know is refused, not ignored: the local
// rig would otherwise pass records AWS filters out.
func TestCompileRefuses(t *testing.T) {
	for _, pattern := range []string{
		`[]`,
		`{}`,
		`{"a":"b"}`,
		`{"a":[]}`,
		`{"a":[{"cidr":"10.0.0.0/24"}]}`,
		`{"a":[{"prefix":"x","suffix":"y"}]}`,
		`{"a":[{"exists":"yes"}]}`,
		`{"a":[{"numeric":[">"]}]}`,
		`{"a":[{"numeric":["!=",1]}]}`,
		`{"a":[{"anything-but":[]}]}`,
		`{"a":[{"anything-but":{"wildcard":"x*"}}]}`,
		`{"$or":[{"a":["x"]}]}`,
		`{"a":[["nested list"]]}`,
	} {
		if _, err := Compile([]byte(pattern)); err == nil {
			t.Errorf("Compile(%s) accepted", pattern)
		}
	}
}

// A pipe reading a DynamoDB stream filters on the record's dynamodb key
// only: the poller's fields (eventName, ...) are refused, as AWS documents,
// wherever they stand at the top of the pattern.
func TestCompilePipeFilter(t *testing.T) {
	refused := []string{
		`{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"status":{"S":["succeeded"]}}}}`,
		`{"eventSourceARN":[{"prefix":"arn:"}]}`,
		`{"$or":[{"eventName":["INSERT"]},{"dynamodb":{"Keys":{"pk":{"S":["x"]}}}}]}`,
		`{"awsRegion":["eu-west-1"]}`,
		`{"userIdentity":{"type":["Service"]}}`, // a stream field, but not the dynamodb key
	}
	for _, field := range PollerFields {
		refused = append(refused, `{"`+field+`":["x"]}`)
	}
	for _, p := range refused {
		if _, err := CompilePipeFilter([]byte(p)); err == nil {
			t.Errorf("CompilePipeFilter(%s) accepted a field a pipe cannot filter on", p)
		}
		if _, err := Compile([]byte(p)); err != nil {
			t.Errorf("Compile(%s): %v (a rule may use any field)", p, err)
		}
	}
	// The images alone tell an insert from a change of status: an INSERT
	// has no OldImage, which exists:false matches.
	p, err := CompilePipeFilter([]byte(`{"dynamodb":{"NewImage":{"status":{"S":["rejected"]}},"OldImage":{"status":{"S":[{"exists":false}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		record string
		want   bool
	}{{insertRecord, true}, {modifyRecord, false}} {
		got, err := p.MatchJSON([]byte(c.record))
		if err != nil || got != c.want {
			t.Errorf("match %s = %v, %v; want %v", c.record, got, err, c.want)
		}
	}
}
