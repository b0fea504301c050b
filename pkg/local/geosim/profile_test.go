package geosim

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"testing"
)

// backendServer starts ProfileBackend with its own key header.
func backendServer(t *testing.T, optFns ...func(*Config)) (*Server, string) {
	t.Helper()
	return newTestServer(t, append([]func(*Config){WithProfile(ProfileBackend)}, optFns...)...)
}

// call sends a request with the key in header (none when key is empty) and
// the file as a part of type partType named filename.
func call(t *testing.T, method, target, header, key string, file []byte, partType, filename string) response {
	t.Helper()
	var body io.Reader
	contentType := ""
	if file != nil {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
		if partType != "" {
			h.Set("Content-Type", partType)
		}
		pw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pw.Write(file)
		_ = mw.Close()
		body, contentType = &buf, mw.FormDataContentType()
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(header, key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func TestBackendRefusesKeysOffPredict(t *testing.T) {
	sim, base := backendServer(t)
	for _, path := range []string{PathCredits, PathModels} {
		resp := call(t, http.MethodGet, base+path, BackendKeyHeader, testKey, nil, "", "")
		body := resp.json(t)
		if resp.status != http.StatusUnauthorized || body["message_code"] != CodeUnauthorized ||
			dig(t, body, "details", "description") != keysNotAllowedHereWords {
			t.Errorf("%s with a key: %d %s", path, resp.status, resp.body)
		}
	}
	// The same key on predict, in the backend's header, is accepted.
	resp := call(t, http.MethodPost, base+PathPredict, BackendKeyHeader, testKey, testJPEG(t, 1), "image/jpeg", "a.jpg")
	if resp.status != http.StatusOK || resp.json(t)["message_code"] != CodeSuccessBackend {
		t.Fatalf("predict: %d %s", resp.status, resp.body)
	}
	// In the contract's header it is no key at all.
	resp = call(t, http.MethodPost, base+PathPredict, KeyHeader, testKey, testJPEG(t, 1), "image/jpeg", "a.jpg")
	if resp.status != http.StatusUnauthorized || resp.json(t)["message_code"] != CodeAuthRequired {
		t.Errorf("key in X-Service-Key: %d %s", resp.status, resp.body)
	}
	// Without a key, the model list is public; the credit summary is not.
	if resp := call(t, http.MethodGet, base+PathModels, "", "", nil, "", ""); resp.status != http.StatusOK {
		t.Errorf("anonymous model list: %d", resp.status)
	}
	if resp := call(t, http.MethodGet, base+PathCredits, "", "", nil, "", ""); resp.status != http.StatusUnauthorized {
		t.Errorf("anonymous credit summary: %d", resp.status)
	}
	if sim.Charged(DefaultOrg) != 1 {
		t.Errorf("charged %d, want 1", sim.Charged(DefaultOrg))
	}

	// The option is off in the contract profile, and can be turned on there.
	_, cbase := newTestServer(t)
	if resp := get(t, cbase, PathCredits, testKey); resp.status != http.StatusOK {
		t.Errorf("contract profile credit summary: %d", resp.status)
	}
	_, obase := newTestServer(t, WithKeysOnlyOnPredict(true))
	if resp := get(t, obase, PathCredits, testKey); resp.status != http.StatusUnauthorized {
		t.Errorf("contract profile with keys only on predict: %d", resp.status)
	}
}

func TestBackendUploadChecks(t *testing.T) {
	jpeg := testJPEG(t, 1)
	big := append(bytes.Clone(jpeg[:4]), make([]byte, BackendMaxImageBytes-3)...)
	atLimit := big[:BackendMaxImageBytes]
	heic := []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")
	tests := []struct {
		name, partType, filename string
		file                     []byte
		status                   int
		code                     string
	}{
		{"image/jpeg", "image/jpeg", "a.jpg", jpeg, 200, CodeSuccessBackend},
		{"application/octet-stream", "application/octet-stream", "a.bin", jpeg, 200, CodeSuccessBackend},
		{"HEIC by its name whatever the type", "binary/octet-stream", "IMG_1.HEIC", heic, 200, CodeSuccessBackend},
		{"S3's binary/octet-stream", "binary/octet-stream", "a.jpg", jpeg, 400, CodeInvalidFileType},
		{"text/plain", "text/plain", "a.jpg", jpeg, 400, CodeInvalidFileType},
		{"no part type", "", "a.jpg", jpeg, 400, CodeInvalidFileType},
		{"exactly 10 MiB", "image/jpeg", "a.jpg", atLimit, 200, CodeSuccessBackend},
		{"10 MiB and one byte", "image/jpeg", "a.jpg", big, 400, CodeTooLarge},
		{"type before size", "text/plain", "a.jpg", big, 400, CodeInvalidFileType},
		// The backend does not sniff: a file its model cannot read fails there.
		{"not an image", "image/jpeg", "a.jpg", []byte("this is not an image at all, only words"), 500, CodePredictionFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, base := backendServer(t)
			resp := call(t, http.MethodPost, base+PathPredict, BackendKeyHeader, testKey, tt.file, tt.partType, tt.filename)
			if resp.status != tt.status || resp.json(t)["message_code"] != tt.code {
				t.Fatalf("%d %.300s; want %d %s", resp.status, resp.body, tt.status, tt.code)
			}
			want := 0
			if tt.status == 200 {
				want = 1
			}
			if sim.Charged(DefaultOrg) != want {
				t.Errorf("charged %d, want %d", sim.Charged(DefaultOrg), want)
			}
		})
	}
}

func TestBackendResultsAndModels(t *testing.T) {
	sim, base := backendServer(t)
	for seed := range 8 {
		resp := call(t, http.MethodPost, base+PathPredict+"?top_n=12", BackendKeyHeader, testKey, testJPEG(t, seed), "image/jpeg", "a.jpg")
		clusters := dig(t, resp.json(t), "data", "prediction", "clusters").([]any)
		if len(clusters) < 1 || len(clusters) > backendClusters {
			t.Errorf("%d clusters for top_n=12; the backend returns 1 to 5", len(clusters))
		}
		for _, c := range clusters {
			if pts, _ := dig(t, c, "points").([]any); len(pts) == 0 || dig(t, c, "location", "admin2") == "" || dig(t, c, "confidence") != nil {
				t.Errorf("cluster %v: want points, admin2 and no confidence", c)
			}
		}
	}
	resp := call(t, http.MethodPost, base+PathPredict+"?"+url.Values{"model_id": {ModelVehicle}}.Encode(), BackendKeyHeader, testKey, testJPEG(t, 1), "image/jpeg", "a.jpg")
	v := dig(t, resp.json(t), "data", "prediction", "predictions", 0).(map[string]any)
	if v["make"] == "" || v["model"] == "" || v["year"] == "" || v["confidence"].(float64) <= 1 {
		t.Errorf("vehicle %v: want make, model, year and a confidence in percent", v)
	}
	resp = call(t, http.MethodPost, base+PathPredict+"?"+url.Values{"model_id": {ModelPropertyWL}}.Encode(), BackendKeyHeader, testKey, testJPEG(t, 1), "image/jpeg", "a.jpg")
	p := dig(t, resp.json(t), "data", "prediction", "predictions", 0).(map[string]any)
	if p["name"] == "" || p["category"] != "hotel" || dig(t, p, "coordinates", "latitude") == nil {
		t.Errorf("property %v", p)
	}

	resp = call(t, http.MethodGet, base+PathModels, "", "", nil, "", "")
	m := dig(t, resp.json(t), "data", "models", 0).(map[string]any)
	if m["model_id"] != ModelGlobalDefault || m["model_type"] != string(TypeGlobal) || m["credits_per_use"] != 1.0 ||
		m["access_level"] != "public" || m["status"] != "ready" {
		t.Errorf("model record %v", m)
	}
	sim.SetModelsLayout(ModelsLayoutCatalog)
	resp = call(t, http.MethodGet, base+PathModels, "", "", nil, "", "")
	m = dig(t, resp.json(t), "data", 0).(map[string]any)
	if m["id"] != ModelGlobalDefault || m["enabled"] != true || m["name"] != "global" || m["version"] != "0.2" {
		t.Errorf("catalogue record %v", m)
	}
}

func TestBackendNoCredits(t *testing.T) {
	_, base := backendServer(t, func(c *Config) { c.NoCredits = true })
	resp := call(t, http.MethodPost, base+PathPredict, BackendKeyHeader, testKey, testJPEG(t, 1), "image/jpeg", "a.jpg")
	body := resp.json(t)
	if resp.status != http.StatusPaymentRequired || body["message_code"] != CodeOutOfCredits || dig(t, body, "details", "credits_required") != 1.0 {
		t.Errorf("%d %s", resp.status, resp.body)
	}
}

func TestBackendServerErrorsAreTheServices(t *testing.T) {
	sim, base := backendServer(t)
	seen := map[int]string{}
	sim.SetFaults(Faults{ServerErrorRate: 1})
	for i := range 30 {
		resp := call(t, http.MethodPost, base+PathPredict, BackendKeyHeader, testKey, testJPEG(t, i), "image/jpeg", "a.jpg")
		if resp.status == http.StatusTooManyRequests {
			break
		}
		if resp.status == 500 || resp.status == 503 {
			seen[resp.status], _ = resp.json(t)["message_code"].(string)
		}
	}
	if seen[500] != CodePredictionFailed || seen[503] != CodeExternalService {
		t.Errorf("server errors %v: want 500 PREDICTION_FAILED and 503 EXTERNAL_SERVICE_ERROR in the service's envelope", seen)
	}
	if sim.Charged(DefaultOrg) != 0 {
		t.Errorf("charged %d", sim.Charged(DefaultOrg))
	}
}

func TestParseProfileAndLimiter(t *testing.T) {
	for _, s := range []string{"", "contract", "backend"} {
		if _, err := ParseProfile(s); err != nil {
			t.Errorf("ParseProfile(%q): %v", s, err)
		}
	}
	if _, err := ParseProfile("real"); err == nil {
		t.Error("ParseProfile accepted an unknown profile")
	}
	for _, s := range []string{"", "sliding-log", "token-bucket"} {
		if _, err := ParseLimiter(s); err != nil {
			t.Errorf("ParseLimiter(%q): %v", s, err)
		}
	}
	if _, err := ParseLimiter("leaky"); err == nil {
		t.Error("ParseLimiter accepted an unknown limiter")
	}
}
