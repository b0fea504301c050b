package soak

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// badInput is one hostile or odd input and what the pipeline must make of
// it: the record left behind (none when wantStatus is ""), whether the
// message goes back to the queue, and how many prediction requests reach
// the service and how many credits the simulator charges.
type badInput struct {
	name string
	key  string                  // object key; default name + ".jpg"
	body func(testing.TB) []byte // object content; nil uploads nothing
	// message builds the SQS body; default the upload's S3 notification.
	message func(r *rig, obj object) string
	before  func(r *rig, obj object) // runs after the upload, before delivery
	edit    func(*object)            // adjusts what the event says about the object
	rig     rigOptions

	// configErr: the configuration must be refused at cold start with an
	// error naming this variable; nothing else runs.
	configErr string

	wantStatus  string
	wantCode    string
	wantRetry   bool
	wantCalls   int64
	wantCharged int
	check       func(t *testing.T, rec *ledger.Record)
}

func bytesOf(b []byte) func(testing.TB) []byte { return func(testing.TB) []byte { return b } }

func strPtr(s string) *string { return &s }

func wantContentType(ct string) func(*testing.T, *ledger.Record) {
	return func(t *testing.T, rec *ledger.Record) {
		if rec.ContentType != ct {
			t.Errorf("content_type = %q, want %q", rec.ContentType, ct)
		}
	}
}

// answer makes a service stand-in that reads the upload and answers 200
// with body.
func answer(body func() []byte) func(http.Handler) http.Handler {
	return func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_, _ = io.Copy(io.Discard, req.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body())
		})
	}
}

const validEnvelopeWithoutID = `{"message_code":"success","data":{"prediction":{"result_type":"coordinates","clusters":[{"center":{"latitude":48.85,"longitude":2.35},"location":{"name":"Paris","admin1":"Ile-de-France","country_code":"FR"},"radius_km":3}],"processing_time_ms":12},"model_id":"geo-global-v2","credits_consumed":1}}`

func badInputs() []badInput {
	jpeg := func(t testing.TB) []byte { return uniqueJPEG(t, t.Name()) }
	return []badInput{
		// Objects the pipeline refuses before spending anything.
		{name: "zero-byte object", body: bytesOf(nil),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonEmptyObject},
		{name: "folder marker", key: "holiday photos/", body: bytesOf(nil),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonFolderMarker},
		{name: "folder marker with content", key: "odd/", body: jpeg,
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonFolderMarker},
		{name: "10 MB plus one byte, oversize=reject", body: func(t testing.TB) []byte { return sized(uniqueJPEG(t, "big"), int(imageformat.DefaultMaxImageBytes)+1) },
			rig:        rigOptions{env: map[string]string{envvars.Oversize: predictor.OversizeReject}},
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonTooLarge},
		{name: "10 MB plus one byte, downscaled", body: func(t testing.TB) []byte { return sized(uniqueJPEG(t, "big"), int(imageformat.DefaultMaxImageBytes)+1) },
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1,
			check: func(t *testing.T, rec *ledger.Record) {
				if !rec.Downscaled || rec.SentBytes <= 0 || rec.SentBytes > imageformat.DefaultMaxImageBytes {
					t.Errorf("downscaled %v sent %d bytes, want a downscaled JPEG under the limit", rec.Downscaled, rec.SentBytes)
				}
			}},
		// Issue 15: photos the pipeline can never send, refused with a
		// reason before any call.
		{name: "decompression bomb: 100,000 x 100,000 PNG of a few hundred bytes", key: "bomb.png",
			body:       bytesOf(exiftest.PNGBomb(exiftest.Harbour().Bytes(), 100_000, 100_000)),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonTooManyPixels,
			check: wantMessage("100000 x 100000")},
		{name: "decompression bomb over the limit", key: "bomb-big.png",
			body:       bytesOf(exiftest.PNGBomb(exiftest.Harbour().Bytes(), 100_000, 100_000)),
			rig:        rigOptions{env: map[string]string{envvars.MaxImageBytes: "100"}},
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonTooManyPixels,
			check: wantMessage("100000 x 100000")},
		{name: "HEIC over the limit", key: "IMG_0002.HEIC", body: bytesOf(exiftest.HEIC(exiftest.Harbour().Bytes(), 4032, 3024, 8192)),
			rig:        rigOptions{env: map[string]string{envvars.MaxImageBytes: "4096"}},
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonCannotDownscale,
			check: wantMessage("no pure-Go HEIC decoder")},

		// Issue 15: damaged EXIF. The image itself can be sent, so it is
		// paid for once, with exifGps=skip: bad EXIF is never ground truth
		// and never a reason to skip; the record says why it was not used.
		{name: "EXIF truncated", body: bytesOf(exiftest.JPEG(exiftest.Harbour().Bytes()[:80], nil, 0)),
			rig:        skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonOffsetOutside)},
		{name: "EXIF GPS pointer outside the file", body: bytesOf(exifWithTIFF(func(t *exiftest.TIFF) {
			t.IFD0 = append(t.IFD0, exiftest.Raw(exiftest.TagGPSIFD, exiftest.TypeLong, 1, 0x7fff_ffff))
		})),
			rig:        skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonOffsetOutside)},
		{name: "EXIF GPS latitude with a zero denominator", body: bytesOf(exifWithGPS(func(g *exiftest.GPS) {
			g.LatRationals = &[3]exiftest.Rational{{Num: 53, Den: 0}, {Num: 32, Den: 1}, {Num: 38, Den: 1}}
		})),
			rig:        skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonZeroDenominator)},
		{name: "EXIF IFD declaring 65535 entries", body: bytesOf(exiftest.JPEG(append([]byte("II*\x00\x08\x00\x00\x00\xff\xff"), make([]byte, 100)...), nil, 0)),
			rig:        skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonIFDCount)},
		{name: "EXIF GPS at 0,0 (no fix)", body: bytesOf(exifWithGPS(func(g *exiftest.GPS) { g.Lat, g.Lon = 0, 0 })),
			rig:        skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonNullIsland)},
		{name: "text file named jpg", body: bytesOf(textFile()),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonNotAnImage},
		{name: "html file named png", key: "index.png", body: bytesOf([]byte(strings.Repeat("<!doctype html><html><body>hi</body></html>\n", 4))),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonNotAnImage},
		{name: "svg named jpg", body: bytesOf([]byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`)),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonNotAnImage},
		{name: "pdf named jpg", body: bytesOf([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonNotAnImage},
		{name: "text starting with BM", body: bytesOf([]byte("BMW owners club: meeting notes for the spring season\n")),
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonNotAnImage},
		{name: "JPEG truncated inside its header", body: func(t testing.TB) []byte { return uniqueJPEG(t, "x")[:20] },
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonNotAnImage},
		{name: "object deleted before processing", body: jpeg,
			before:     func(r *rig, obj object) { r.deleteVersion(obj) },
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonObjectNotFound},

		// Valid images in unusual clothes: one call, one credit.
		{name: "exactly 10 MB", body: func(t testing.TB) []byte { return sized(uniqueJPEG(t, "ten"), int(imageformat.DefaultMaxImageBytes)) },
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1},
		{name: "JPEG truncated after its header", body: func(t testing.TB) []byte { j := uniqueJPEG(t, "half"); return j[:len(j)/2] },
			// The service is documented to sniff formats, not to decode
			// fully; the simulator accepts it, so it is paid for.
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantContentType("image/jpeg")},
		{name: "PNG with a jpg extension", body: smallPNGBytes,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantContentType("image/png")},
		{name: "HEIC", key: "IMG_0001.HEIC", body: bytesOf(uniqueHEIC("soak:heic")),
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantContentType("image/heic")},
		{name: "WebP", key: "photo.webp", body: bytesOf(webpHeader()),
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantContentType("image/webp")},
		// GIF metadata cannot be removed without rewriting the file: sent
		// only when the operator keeps metadata (uploadMetadata=keep).
		{name: "GIF", key: "anim.gif", body: bytesOf(sized([]byte("GIF89a\x10\x00\x10\x00"), 64)),
			rig:        rigOptions{env: map[string]string{envvars.UploadMetadata: predictor.UploadMetadataKeep}},
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantContentType("image/gif")},
		{name: "key with spaces", key: "my holiday/photo of the beach.jpg", body: jpeg,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1},
		{name: "key with plus", key: "a+b/c++.jpg", body: jpeg,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1},
		{name: "key with percent", key: "100% real/%41%20.jpg", body: jpeg,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1},
		{name: "key with unicode", key: "café/東京 ☀/Ünïcødé 🙂.jpg", body: jpeg,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1},
		{name: "key of 1000 characters", key: strings.Repeat("k", 996) + ".jpg", body: jpeg,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1},
		{name: "key with quotes and ampersand", key: `"quoted" & <angle> 'single'.jpg`, body: jpeg,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1},

		// Messages that are not uploads of this bucket.
		{name: "event for another bucket", body: jpeg,
			message: func(r *rig, obj object) string { obj.Bucket = "someone-elses-bucket"; return uploadEvent(r.t, obj) }},
		{name: "malformed JSON in the queue", message: func(*rig, object) string { return `{"Records":[{"s3":` },
			wantRetry: true},
		{name: "empty message body", message: func(*rig, object) string { return "" },
			wantRetry: true},
		{name: "event that is not an upload", body: jpeg,
			message: func(r *rig, obj object) string { return removedEvent(r.t, obj) }},
		{name: "S3 test event", message: func(r *rig, _ object) string { return testEvent(r.bucket) }},
		{name: "JSON that is no event", message: func(*rig, object) string { return `{"hello":"world"}` }},
		{name: "event for a key never uploaded",
			edit:       func(o *object) { o.Size, o.ETag = 4321, "0123456789abcdef0123456789abcdef" },
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonObjectNotFound},

		// Configuration and service answers.
		{name: "unknown result_type", body: jpeg, rig: rigOptions{env: map[string]string{envvars.ModelID: geosim.ModelVehicle}},
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 2,
			check: func(t *testing.T, rec *ledger.Record) {
				if rec.ResultType == "coordinates" || rec.ResultType == "accuracy" || rec.RawResult == "" {
					t.Errorf("result_type %q raw_result %d bytes: want an unknown type kept raw", rec.ResultType, len(rec.RawResult))
				}
				if rec.CreditsConsumed != 2 {
					t.Errorf("credits_consumed = %d, want 2", rec.CreditsConsumed)
				}
			}},
		{name: "top_n above range in configuration", rig: rigOptions{env: map[string]string{envvars.TopN: "16"}}, configErr: envvars.TopN},
		{name: "top_n zero in configuration", rig: rigOptions{env: map[string]string{envvars.TopN: "0"}}, configErr: envvars.TopN},
		{name: "top_n not a number in configuration", rig: rigOptions{env: map[string]string{envvars.TopN: "five"}}, configErr: envvars.TopN},
		{name: "model id the list does not know", body: jpeg,
			rig: rigOptions{env: map[string]string{envvars.ModelID: "geo-made-up-v9"}},
			// The 422 is free; the fallback to the default model pays once.
			wantStatus: ledger.StatusSucceeded, wantCalls: 2, wantCharged: 1,
			check: func(t *testing.T, rec *ledger.Record) {
				if !rec.Fallback || rec.RequestedModelID != "geo-made-up-v9" || rec.ModelID != geosim.ModelGlobalDefault {
					t.Errorf("fallback %v requested %q ran %q: want a recorded fallback to %s",
						rec.Fallback, rec.RequestedModelID, rec.ModelID, geosim.ModelGlobalDefault)
				}
			}},
		{name: "model id the list does not know, no fallback", body: jpeg,
			rig:        rigOptions{env: map[string]string{envvars.ModelID: "geo-made-up-v9", envvars.ModelFallback: "false"}},
			wantStatus: ledger.StatusFailed, wantCode: predictor.CodeModelRetired, wantCalls: 1},
		{name: "retired model id", body: jpeg,
			rig:        rigOptions{env: map[string]string{envvars.ModelID: geosim.ModelRetired, envvars.ModelFallback: "false"}},
			wantStatus: ledger.StatusFailed, wantCode: predictor.CodeModelRetired, wantCalls: 1},
		{name: "service response with missing fields", body: jpeg,
			rig:        rigOptions{service: answer(func() []byte { return []byte(validEnvelopeWithoutID) })},
			wantStatus: ledger.StatusFailed, wantCode: predictor.CodeMalformedResponse, wantCalls: 1},
		{name: "service response without data", body: jpeg,
			rig:        rigOptions{service: answer(func() []byte { return []byte(`{"message_code":"success"}`) })},
			wantStatus: ledger.StatusFailed, wantCode: predictor.CodeMalformedResponse, wantCalls: 1},
		{name: "service answers 200 with HTML", body: jpeg,
			rig:        rigOptions{service: answer(func() []byte { return []byte("<html><body>maintenance</body></html>") })},
			wantStatus: ledger.StatusFailed, wantCode: predictor.CodeMalformedResponse, wantCalls: 1},
		{name: "huge response body", body: jpeg,
			rig: rigOptions{service: answer(func() []byte {
				return append(append([]byte(`{"message_code":"success","data":{"padding":"`), bytes.Repeat([]byte("x"), 9<<20)...), `"}}`...)
			})},
			wantStatus: ledger.StatusFailed, wantCode: predictor.CodeMalformedResponse, wantCalls: 1},
		{name: "secret without the geo_ prefix", body: jpeg, rig: rigOptions{secretValue: strPtr("sk_test_fake_key_1")},
			wantRetry: true, wantStatus: ledger.StatusWaiting, wantCode: predictor.CodeKeyUnavailable},
		{name: "empty secret", body: jpeg, rig: rigOptions{secretValue: strPtr("")},
			wantRetry: true, wantStatus: ledger.StatusWaiting, wantCode: predictor.CodeKeyUnavailable},
		{name: "secret of only spaces", body: jpeg, rig: rigOptions{secretValue: strPtr("   \n")},
			wantRetry: true, wantStatus: ledger.StatusWaiting, wantCode: predictor.CodeKeyUnavailable},
	}
}

func smallPNGBytes(t testing.TB) []byte { return smallPNG(t) }

// skipEXIF runs a case with exifGps=skip, where a usable EXIF position
// would save the call: the damaged ones must not.
var skipEXIF = rigOptions{env: map[string]string{envvars.ExifGPS: predictor.ExifGPSSkip}}

func exifWithTIFF(edit func(t *exiftest.TIFF)) []byte {
	t := exiftest.Harbour().TIFF()
	edit(&t)
	return exiftest.JPEG(t.Bytes(), nil, 0)
}

func exifWithGPS(edit func(g *exiftest.GPS)) []byte {
	p := exiftest.Harbour()
	g := *p.GPS
	edit(&g)
	p.GPS = &g
	return exiftest.JPEG(p.Bytes(), nil, 0)
}

// wantEXIFProblem checks a photo was predicted, not taken from its EXIF,
// and its record names why the EXIF position was not used.
func wantEXIFProblem(reason photoexif.Reason) func(*testing.T, *ledger.Record) {
	return func(t *testing.T, rec *ledger.Record) {
		if rec.Source != ledger.SourceService || rec.ExifLatitude != nil || rec.ErrorKm != nil {
			t.Errorf("source %q exif position %v error %v: damaged EXIF was used", rec.Source, rec.ExifLatitude, rec.ErrorKm)
		}
		if rec.ExifGPSProblem != string(reason) {
			t.Errorf("exif_gps_problem %q, want %q", rec.ExifGPSProblem, reason)
		}
	}
}

// wantMessage checks the record's error message says what it must.
func wantMessage(part string) func(*testing.T, *ledger.Record) {
	return func(t *testing.T, rec *ledger.Record) {
		if !strings.Contains(rec.ErrorMessage, part) {
			t.Errorf("error_message %q does not say %q", rec.ErrorMessage, part)
		}
	}
}

// TestBadInputs runs each hostile input through the real handler and checks
// the recorded outcome and that no credit is spent where the service would
// refuse the input.
func TestBadInputs(t *testing.T) {
	cases := append(badInputs(), hostileInputs()...)
	if len(cases) < 30 {
		t.Fatalf("%d cases: the issue asks for at least 30", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.configErr != "" {
				runConfigCase(t, tc)
				return
			}
			r := newRig(t, tc.rig)
			key := tc.key
			if key == "" {
				key = strings.ReplaceAll(tc.name, " ", "-") + ".jpg"
			}
			var obj object
			if tc.body != nil {
				obj = r.put(key, tc.body(t))
			} else {
				obj = object{Bucket: r.bucket, Key: key}
			}
			if tc.edit != nil {
				tc.edit(&obj)
			}
			if tc.before != nil {
				tc.before(r, obj)
			}
			body := ""
			if tc.message != nil {
				body = tc.message(r, obj)
			} else {
				body = uploadEvent(t, obj)
			}

			retry := r.invokeOne(body)

			if retry != tc.wantRetry {
				t.Errorf("returned for retry = %v, want %v", retry, tc.wantRetry)
			}
			if got := r.predictRequests.Load(); got != tc.wantCalls {
				t.Errorf("%d prediction requests, want %d", got, tc.wantCalls)
			}
			if got := r.sim.Charged(simOrg); got != tc.wantCharged {
				t.Errorf("%d credits charged, want %d", got, tc.wantCharged)
			}
			items := r.scanTable()
			rec := r.record(obj)
			if tc.wantStatus == "" {
				if items != "" {
					t.Errorf("want no record, the table holds:\n%s", items)
				}
				return
			}
			if rec == nil {
				t.Fatalf("no record, want %s (%s)", tc.wantStatus, tc.wantCode)
			}
			if rec.Status != tc.wantStatus || rec.ErrorCode != tc.wantCode {
				t.Errorf("record %s (%s: %s), want %s (%s)", rec.Status, rec.ErrorCode, rec.ErrorMessage, tc.wantStatus, tc.wantCode)
			}
			if rec.Key != obj.Key || rec.Bucket != obj.Bucket {
				t.Errorf("record names s3://%s/%s, want s3://%s/%s", rec.Bucket, rec.Key, obj.Bucket, obj.Key)
			}
			if rec.Status == ledger.StatusSucceeded {
				if rec.PredictionID == "" {
					t.Errorf("succeeded record without a prediction id: %+v", rec)
				}
				if known := rec.ResultType == "coordinates" || rec.ResultType == "accuracy"; known && rec.Place == "" {
					t.Errorf("succeeded %s record without a place: %+v", rec.ResultType, rec)
				}
				if rec.CreditsConsumed != tc.wantCharged {
					t.Errorf("credits_consumed = %d, the simulator charged %d", rec.CreditsConsumed, tc.wantCharged)
				}
			}
			if tc.check != nil {
				tc.check(t, rec)
			}
			// A redelivery of the same event changes nothing and costs nothing.
			r.invokeOne(body)
			if got := r.predictRequests.Load(); got != tc.wantCalls {
				t.Errorf("after a redelivery: %d prediction requests, want %d", got, tc.wantCalls)
			}
		})
	}
}

// runConfigCase checks that a bad configuration is refused at cold start
// with an error naming the variable, before any call can be made.
func runConfigCase(t *testing.T, tc badInput) {
	env := map[string]string{
		envvars.TableName: "results", envvars.SecretID: secretID, envvars.APIURL: "http://127.0.0.1:9",
	}
	for k, v := range tc.rig.env {
		env[k] = v
	}
	_, err := predictor.LoadConfig(func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), tc.configErr) {
		t.Fatalf("LoadConfig error %v, want one naming %s", err, tc.configErr)
	}
}
