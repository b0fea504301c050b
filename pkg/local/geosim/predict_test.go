package geosim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/uuid"
)

func TestPredictGlobalDefault(t *testing.T) {
	sim, base := newTestServer(t)
	resp := predict(t, base, testKey, nil, testJPEG(t, 1))
	if resp.status != http.StatusOK {
		t.Fatalf("status %d: %s", resp.status, resp.body)
	}
	body := resp.json(t)
	if got := dig(t, body, "message_code"); got != "success" {
		t.Errorf("message_code = %v", got)
	}
	data := dig(t, body, "data")
	if got := dig(t, data, "model_id"); got != ModelGlobalDefault {
		t.Errorf("model_id = %v, want the default %s", got, ModelGlobalDefault)
	}
	if got := dig(t, data, "credits_consumed"); got != 1.0 {
		t.Errorf("credits_consumed = %v, want 1", got)
	}
	id, err := uuid.Parse(dig(t, data, "prediction_id").(string))
	if err != nil || id.Version() != 4 {
		t.Errorf("prediction_id %v is not a v4 UUID (%v)", id, err)
	}
	pred := dig(t, data, "prediction")
	if got := dig(t, pred, "result_type"); got != "coordinates" {
		t.Errorf("result_type = %v", got)
	}
	clusters := dig(t, pred, "clusters").([]any)
	if len(clusters) != DefaultTopN {
		t.Fatalf("%d clusters, want default %d", len(clusters), DefaultTopN)
	}
	prev := 2.0
	for i := range clusters {
		c := dig(t, clusters, i)
		conf := dig(t, c, "confidence").(float64)
		if conf > prev {
			t.Errorf("cluster %d confidence %v above the previous %v: not sorted", i, conf, prev)
		}
		prev = conf
		lat, lon := dig(t, c, "center", "latitude").(float64), dig(t, c, "center", "longitude").(float64)
		if lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			t.Errorf("cluster %d center (%v, %v) off the globe", i, lat, lon)
		}
		if cc := dig(t, c, "location", "country_code").(string); len(cc) != 2 {
			t.Errorf("cluster %d country_code %q", i, cc)
		}
		if dig(t, c, "location", "name") == "" || dig(t, c, "radius_km").(float64) <= 0 {
			t.Errorf("cluster %d lacks a name or radius: %v", i, c)
		}
	}
	if _, ok := dig(t, pred, "processing_time_ms").(float64); !ok {
		t.Error("processing_time_ms missing")
	}
	if got := sim.Charged(DefaultOrg); got != 1 {
		t.Errorf("charged %d, want 1", got)
	}
}

func TestPredictDeterministic(t *testing.T) {
	_, base := newTestServer(t)
	img := testJPEG(t, 1)
	clusters := func(file []byte, topN int) []any {
		resp := predict(t, base, testKey, url.Values{"top_n": {strconv.Itoa(topN)}}, file)
		if resp.status != http.StatusOK {
			t.Fatalf("status %d: %s", resp.status, resp.body)
		}
		return dig(t, resp.json(t), "data", "prediction", "clusters").([]any)
	}
	first, again := clusters(img, 15), clusters(img, 15)
	if !reflect.DeepEqual(first, again) {
		t.Error("same bytes gave different clusters")
	}
	if three := clusters(img, 3); !reflect.DeepEqual(three, first[:3]) {
		t.Error("top_n=3 is not the prefix of top_n=15")
	}
	if other := clusters(testJPEG(t, 2), 15); reflect.DeepEqual(other, first) {
		t.Error("different bytes gave the same clusters")
	}
}

func TestPredictModelsAndCharges(t *testing.T) {
	tests := []struct {
		model      string
		resultType string
		cost       int
		shapeKey   string
	}{
		{"", "coordinates", 1, "clusters"},
		{ModelGlobalDefault, "coordinates", 1, "clusters"},
		{ModelHighAccuracy, "accuracy", 3, "predictions"},
		{ModelVehicle, "vehicle", 2, "predictions"},
		{ModelPropertyWL, "property", 3, "predictions"},
	}
	for _, tt := range tests {
		t.Run("model="+tt.model, func(t *testing.T) {
			sim, base := newTestServer(t)
			q := url.Values{}
			if tt.model != "" {
				q.Set("model_id", tt.model)
			}
			resp := predict(t, base, testKey, q, testJPEG(t, 3))
			if resp.status != http.StatusOK {
				t.Fatalf("status %d: %s", resp.status, resp.body)
			}
			data := dig(t, resp.json(t), "data")
			if got := dig(t, data, "credits_consumed"); got != float64(tt.cost) {
				t.Errorf("credits_consumed = %v, want %d", got, tt.cost)
			}
			if got := dig(t, data, "prediction", "result_type"); got != tt.resultType {
				t.Errorf("result_type = %v, want %s", got, tt.resultType)
			}
			if dig(t, data, "prediction", tt.shapeKey) == nil {
				t.Errorf("result lacks %s", tt.shapeKey)
			}
			if got := sim.Charged(DefaultOrg); got != tt.cost {
				t.Errorf("charged %d, want %d", got, tt.cost)
			}
			b, _ := sim.Balance(DefaultOrg)
			if b.SubscriptionUsed != tt.cost {
				t.Errorf("subscription used %d, want %d", b.SubscriptionUsed, tt.cost)
			}
		})
	}
}

func TestPredictAccuracyShape(t *testing.T) {
	_, base := newTestServer(t)
	resp := predict(t, base, testKey, url.Values{"model_id": {ModelHighAccuracy}, "top_n": {"4"}}, testJPEG(t, 4))
	pred := dig(t, resp.json(t), "data", "prediction")
	if _, has := pred.(map[string]any)["clusters"]; has {
		t.Error("accuracy result has clusters")
	}
	preds := dig(t, pred, "predictions").([]any)
	if len(preds) != 4 {
		t.Fatalf("%d predictions, want top_n 4", len(preds))
	}
	for i := range preds {
		if got := dig(t, preds, i, "rank"); got != float64(i+1) {
			t.Errorf("prediction %d rank %v", i, got)
		}
		for _, k := range []string{"name", "admin1", "admin2", "country_code"} {
			if dig(t, preds, i, "location", k) == "" {
				t.Errorf("prediction %d location.%s empty", i, k)
			}
		}
		if _, ok := dig(t, preds, i, "heading_deg").(float64); !ok {
			t.Errorf("prediction %d lacks heading_deg", i)
		}
	}
	if !reflect.DeepEqual(dig(t, pred, "top_prediction"), preds[0]) {
		t.Error("top_prediction differs from predictions[0]")
	}
}

func TestPredictTopN(t *testing.T) {
	tests := []struct {
		raw  string
		want int // 0: rejected with 422
	}{
		{"1", 1}, {"15", 15}, {"7", 7},
		{"0", 0}, {"16", 0}, {"-1", 0}, {"abc", 0}, {"", 0}, {"2.5", 0},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			sim, base := newTestServer(t)
			resp := predict(t, base, testKey, url.Values{"top_n": {tt.raw}}, testJPEG(t, 1))
			if tt.want == 0 {
				if resp.status != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", resp.status)
				}
				body := resp.json(t)
				if dig(t, body, "message_code") != CodeInvalidInput {
					t.Errorf("message_code = %v", body["message_code"])
				}
				loc := dig(t, body, "details", "validation_errors", 0, "loc")
				if !reflect.DeepEqual(loc, []any{"query", "top_n"}) {
					t.Errorf("detail loc = %v", loc)
				}
				if sim.Charged(DefaultOrg) != 0 {
					t.Error("a rejected call was charged")
				}
				return
			}
			if resp.status != http.StatusOK {
				t.Fatalf("status %d: %s", resp.status, resp.body)
			}
			if n := len(dig(t, resp.json(t), "data", "prediction", "clusters").([]any)); n != tt.want {
				t.Errorf("%d clusters, want %d", n, tt.want)
			}
		})
	}
}

func TestPredictModelRejections(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(*Server)
		key      func(*Server) string
		model    string
		status   int
		code     string
		mentions string
	}{
		{"retired", nil, nil, ModelRetired, 422, CodeInvalidInput, ModelRetired},
		{"unknown", nil, nil, "geo-made-up-v9", 422, CodeInvalidInput, "geo-made-up-v9"},
		{"retired at run time", func(s *Server) { _ = s.RetireModel(ModelHighAccuracy) }, nil, ModelHighAccuracy, 422, CodeInvalidInput, ModelHighAccuracy},
		{"whitelist not granted", nil, func(s *Server) string { s.AddAccount("acme", 100, 0); return s.IssueKey("acme", "ci") },
			ModelPropertyWL, 422, CodeInvalidInput, ModelPropertyWL},
		{"down", func(s *Server) { _ = s.SetModelStatus(ModelHighAccuracy, StatusDown) }, nil, ModelHighAccuracy, 503, CodeExternalService, ModelHighAccuracy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, base := newTestServer(t)
			if tt.setup != nil {
				tt.setup(sim)
			}
			key := testKey
			if tt.key != nil {
				key = tt.key(sim)
			}
			resp := predict(t, base, key, url.Values{"model_id": {tt.model}}, testJPEG(t, 1))
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.status, tt.status, resp.body)
			}
			body := resp.json(t)
			if body["message_code"] != tt.code || dig(t, body, "details", "model_id") != tt.mentions {
				t.Errorf("body %s: want message_code %s naming %s", resp.body, tt.code, tt.mentions)
			}
			if !bytes.Contains(resp.body, []byte(tt.mentions)) {
				t.Errorf("message does not name %s", tt.mentions)
			}
			if calls := sim.Calls(); calls[len(calls)-1].Charged != 0 || sim.Charged(calls[len(calls)-1].Org) != 0 {
				t.Error("a rejected call was charged")
			}
		})
	}
}

func TestPredictUnknownStatusStillServes(t *testing.T) {
	sim, base := newTestServer(t)
	if err := sim.SetModelStatus(ModelGlobalDefault, StatusUnknown); err != nil {
		t.Fatal(err)
	}
	if resp := predict(t, base, testKey, nil, testJPEG(t, 1)); resp.status != http.StatusOK {
		t.Errorf("status %d, want 200 for an unknown-status model", resp.status)
	}
}

func TestPredictUpload(t *testing.T) {
	jpegMagic := []byte{0xFF, 0xD8, 0xFF, 0xE0}
	atLimit := append(bytes.Clone(jpegMagic), make([]byte, MaxImageBytes-int64(len(jpegMagic)))...)
	overLimit := append(bytes.Clone(atLimit), 0)
	formats := map[string][]byte{
		"png":  testPNG(t),
		"gif":  []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"),
		"webp": []byte("RIFF\x1a\x00\x00\x00WEBPVP8 \x0e\x00\x00\x00"),
		"heic": []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"),
		"avif": []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"),
		"tiff": []byte("II*\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
		"bmp":  []byte("BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00"),
	}
	tests := []struct {
		name   string
		field  string
		file   []byte
		status int
		code   string
	}{
		{"exactly the limit", "file", atLimit, 200, CodeSuccess},
		{"one byte over", "file", overLimit, 400, CodeTooLarge},
		{"text file", "file", []byte("hello, this is not an image at all"), 400, CodeInvalidFileType},
		{"empty file", "file", nil, 400, CodeInvalidFileType},
		{"wrong field name", "image", testJPEG(t, 1), 422, CodeInvalidInput},
		{"no parts", "", nil, 422, CodeInvalidInput},
	}
	for name, b := range formats {
		tests = append(tests, struct {
			name   string
			field  string
			file   []byte
			status int
			code   string
		}{name, "file", b, 200, CodeSuccess})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, base := newTestServer(t)
			body, ct := multipartBody(t, tt.field, tt.file)
			resp := send(t, http.MethodPost, base+PathPredict, testKey, ct, body)
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d: %.200s", resp.status, tt.status, resp.body)
			}
			if got := resp.json(t)["message_code"]; got != tt.code {
				t.Errorf("message_code %v, want %s", got, tt.code)
			}
			wantCharge := 0
			if tt.status == 200 {
				wantCharge = 1
			}
			if got := sim.Charged(DefaultOrg); got != wantCharge {
				t.Errorf("charged %d, want %d", got, wantCharge)
			}
			if tt.field == "file" && tt.code != CodeTooLarge {
				sum := sha256.Sum256(tt.file)
				c := sim.Calls()[0]
				if c.FileSHA256 != hex.EncodeToString(sum[:]) || c.BytesReceived != int64(len(tt.file)) {
					t.Errorf("recorded %d bytes sha %s, want %d bytes sha %x", c.BytesReceived, c.FileSHA256, len(tt.file), sum)
				}
			}
		})
	}
}

func TestPredictNotMultipart(t *testing.T) {
	_, base := newTestServer(t)
	resp := send(t, http.MethodPost, base+PathPredict, testKey, "image/jpeg", bytes.NewReader(testJPEG(t, 1)))
	if resp.status != http.StatusUnprocessableEntity {
		t.Errorf("raw image body: status %d, want 422", resp.status)
	}
}

func TestMaxImageBytesIsTenMillion(t *testing.T) {
	// The contract's "10 MB" is SI: 10 MiB is over the limit.
	if MaxImageBytes != 10_000_000 {
		t.Errorf("MaxImageBytes = %d, want 10000000", MaxImageBytes)
	}
}

func TestModelDownIsRefusedUncharged(t *testing.T) {
	sim, base := newTestServer(t)
	if err := sim.SetModelStatus(ModelHighAccuracy, StatusDown); err != nil {
		t.Fatal(err)
	}
	resp := predict(t, base, testKey, url.Values{"model_id": {ModelHighAccuracy}}, testJPEG(t, 1))
	if resp.status != http.StatusServiceUnavailable || resp.json(t)["message_code"] != CodeExternalService || sim.Charged(DefaultOrg) != 0 {
		t.Errorf("status %d, body %s; want 503 EXTERNAL_SERVICE_ERROR, nothing charged", resp.status, resp.body)
	}
}
