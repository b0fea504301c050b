package main

import (
	predictorpkg "github.com/geolocate-aws/geolocate/pkg/predictor"

	"encoding/json"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeAPIURL is a placeholder service address; nothing is ever called.
const fakeAPIURL = "https://geo.test.invalid/api"

// cdkJSONContext returns the context block of the project's cdk.json: the
// defaults every synth starts from, plus CDK feature flags.
func cdkJSONContext(t testing.TB) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../cdk.json")
	if err != nil {
		t.Fatalf("read cdk.json: %v", err)
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse cdk.json: %v", err)
	}
	return doc.Context
}

// defaultContext is cdk.json's context with the one value it cannot hold,
// the service URL, supplied as `-c apiUrl=...` would.
func defaultContext(t testing.TB) map[string]any {
	ctx := cdkJSONContext(t)
	ctx[keyAPIURL] = fakeAPIURL
	return ctx
}

func lookupIn(ctx map[string]any) ContextLookup {
	return func(key string) any { return ctx[key] }
}

func TestLoadConfigFromCDKJSONDefaults(t *testing.T) {
	ctx := defaultContext(t)
	cfg, err := LoadConfig(lookupIn(ctx))
	if err != nil {
		t.Fatalf("cdk.json defaults rejected: %v", err)
	}
	// JSON numbers in cdk.json become the typed fields.
	if want := time.Duration(ctx[keyMonitorScheduleMinutes].(float64)) * time.Minute; cfg.MonitorSchedule != want {
		t.Errorf("MonitorSchedule = %v, want %v", cfg.MonitorSchedule, want)
	}
	if want := time.Duration(ctx[keyPredictorTimeoutSeconds].(float64)) * time.Second; cfg.PredictorTimeout != want {
		t.Errorf("PredictorTimeout = %v, want %v", cfg.PredictorTimeout, want)
	}
	if cfg.MonitorSchedule != 5*time.Minute {
		t.Errorf("default monitor schedule = %v, the issue asks for every 5 minutes", cfg.MonitorSchedule)
	}
	if cfg.RemoveOnDestroy {
		t.Error("removeOnDestroy defaults to true; stored data must be retained by default")
	}
	if cfg.TopN != 0 || cfg.ModelID != "" {
		t.Errorf("TopN = %d, ModelID = %q; the defaults must leave both to the service", cfg.TopN, cfg.ModelID)
	}
	if cfg.ClaimLease() <= cfg.PredictorTimeout {
		t.Errorf("ClaimLease %v must outlast the predictor timeout %v", cfg.ClaimLease(), cfg.PredictorTimeout)
	}
	if cfg.QueueVisibilityTimeout() < 6*cfg.PredictorTimeout {
		t.Errorf("visibility timeout %v is less than six times the timeout %v", cfg.QueueVisibilityTimeout(), cfg.PredictorTimeout)
	}
}

func TestLoadConfigRequiresAPIURL(t *testing.T) {
	// cdk.json deliberately has no service URL: deploying must name one.
	_, err := LoadConfig(lookupIn(cdkJSONContext(t)))
	if err == nil || !strings.Contains(err.Error(), `"apiUrl"`) || !strings.Contains(err.Error(), "-c apiUrl=") {
		t.Fatalf("err = %v, want a missing apiUrl error telling how to pass it", err)
	}
}

func TestLoadConfigAcceptsBoundaryValues(t *testing.T) {
	// Lambda's largest event source concurrency needs a raised account quota,
	// and a rate that paces a round of 1000 batches within the timeout.
	largest := map[string]any{keyAccountConcurrencyLimit: "2000", keyRatePerMinute: "60000", keyPacing: "instance", keyBatchSize: "1"}
	tests := []struct {
		key   string
		value any
		check func(Config) bool
		with  map[string]any // other keys the value needs
	}{
		{keyBatchSize, "10", func(c Config) bool { return c.BatchSize == 10 }, nil}, // -c values arrive as strings
		{keyBatchSize, 1.0, func(c Config) bool { return c.BatchSize == 1 }, nil},
		{keyMaxConcurrency, "2", func(c Config) bool { return c.MaxConcurrency == 2 }, nil},
		{keyMaxConcurrency, 1000.0, func(c Config) bool { return c.MaxConcurrency == 1000 }, largest},
		{keyAccountConcurrencyLimit, "10", func(c Config) bool { return c.AccountConcurrencyLimit == 10 }, nil},
		{keyNotifications, "EventBridge", func(c Config) bool { return c.Notifications == notificationsEventBridge }, nil},
		{keyNotifications, "", func(c Config) bool { return c.Notifications == notificationsS3 }, nil},
		{keyNotifications, "s3", func(c Config) bool { return c.Notifications == notificationsS3 },
			map[string]any{keyExistingBucketName: "shared-bucket"}},
		{keyExistingBucketName, "shared-bucket", func(c Config) bool { return c.Notifications == notificationsEventBridge }, nil},
		{keyDLQMaxReceiveCount, "5", func(c Config) bool { return c.DLQMaxReceiveCount == 5 }, nil},
		{keyTopN, "", func(c Config) bool { return c.TopN == 0 }, nil},
		{keyTopN, "15", func(c Config) bool { return c.TopN == 15 }, nil},
		{keyTopN, 1.0, func(c Config) bool { return c.TopN == 1 }, nil},
		{keyPredictorTimeoutSeconds, "900", func(c Config) bool { return c.PredictorTimeout == 15*time.Minute }, nil},
		{keyPredictorMemoryMB, "10240", func(c Config) bool { return c.PredictorMemoryMB == 10240 }, nil},
		{keyMonitorScheduleMinutes, "1440", func(c Config) bool { return c.MonitorSchedule == 24*time.Hour }, nil},
		{keyLogRetentionDays, "3653", func(c Config) bool { return c.LogRetentionDays == 3653 }, nil},
		{keyLogLevel, "debug", func(c Config) bool { return c.LogLevel == "DEBUG" }, nil},
		{keyModelFallback, "false", func(c Config) bool { return !c.ModelFallback }, nil},
		{keyRemoveOnDestroy, true, func(c Config) bool { return c.RemoveOnDestroy }, nil},
		{keyAPIURL, "https://geo.test.invalid/", func(c Config) bool { return c.APIURL == "https://geo.test.invalid" }, nil},
		{keyAPIKeyHeader, "X-Geo-Api-Key", func(c Config) bool { return c.APIKeyHeader == "X-Geo-Api-Key" }, nil},
		{keyAPIKeyHeader, "", func(c Config) bool { return c.APIKeyHeader == "X-Service-Key" }, nil},
		{keyAlarmEmail, "ops@example.com", func(c Config) bool { return c.AlarmEmail == "ops@example.com" }, nil},
		{keyExistingBucketName, "my.upload-bucket-1", func(c Config) bool { return c.ExistingBucketName == "my.upload-bucket-1" }, nil},
		{keyExistingSecretArn, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123", func(c Config) bool { return c.ExistingSecretArn != "" }, nil},
		{keyExistingBucketKmsKeyArn, "", func(c Config) bool { return c.ExistingBucketKmsKeyArn == "" }, nil},
		{keyFailedPredictionRateThreshold, "0.5", func(c Config) bool { return c.FailedPredictionRateThreshold == 0.5 }, nil},
		{keyQueueAgeAlarmSeconds, "60", func(c Config) bool { return c.QueueAgeAlarm == time.Minute }, nil},
		{keyNoncurrentVersionDays, "1", func(c Config) bool { return c.NoncurrentVersionDays == 1 }, nil},
		{keyNoncurrentVersionDays, 3650.0, func(c Config) bool { return c.NoncurrentVersionDays == 3650 }, nil},
		{keyMaxImageBytes, "1", func(c Config) bool { return c.MaxImageBytes == 1 }, nil},
		{keyMaxImageBytes, "104857600", func(c Config) bool { return c.MaxImageBytes == 104857600 }, nil},
		{keyFinishReserveSeconds, "2", func(c Config) bool { return c.FinishReserve == 2*time.Second }, nil},
		{keyFinishReserveSeconds, 59.0, func(c Config) bool { return c.FinishReserve == 59*time.Second }, nil}, // under half of the default 120 s
		{keyExifGPS, "skip", func(c Config) bool { return c.ExifGPS == "skip" }, nil},
		{keyEvents, "false", func(c Config) bool { return !c.Events }, nil},
		{keyEventBusName, "orders/geo-results_1.x", func(c Config) bool { return c.EventBusName == "orders/geo-results_1.x" && c.Events }, nil},
		{keyExifGPS, "IGNORE", func(c Config) bool { return c.ExifGPS == "ignore" }, nil},
		{keyExifGPS, "", func(c Config) bool { return c.ExifGPS == "predict" }, nil},
		{keyOversize, "reject", func(c Config) bool { return c.Oversize == "reject" }, nil},
		{keyOversize, "", func(c Config) bool { return c.Oversize == "downscale" }, nil},
		{keyUploadMetadata, "Keep", func(c Config) bool { return c.UploadMetadata == "keep" }, nil},
		{keyUploadMetadata, "", func(c Config) bool { return c.UploadMetadata == "strip" }, nil},
		{keyReuseResults, "Off", func(c Config) bool { return c.ReuseResults == "off" }, nil},
		{keyReuseResults, "", func(c Config) bool { return c.ReuseResults == "content" }, nil},
		{keyReuseMaxAgeDays, "30", func(c Config) bool { return c.ReuseMaxAgeDays == 30 }, nil},
		{keyDownscaleMaxSidePx, "512", func(c Config) bool { return c.DownscaleMaxSidePx == 512 }, nil},
		{keyDownscaleMaxSidePx, 16384.0, func(c Config) bool { return c.DownscaleMaxSidePx == 16384 }, nil},
		{keyMaxServerDelaySeconds, "1", func(c Config) bool { return c.MaxServerDelay == time.Second }, nil},
		{keyMaxServerDelaySeconds, 43200.0, func(c Config) bool { return c.MaxServerDelay == 12*time.Hour }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+toText(tt.value), func(t *testing.T) {
			ctx := defaultContext(t)
			maps.Copy(ctx, tt.with)
			ctx[tt.key] = tt.value
			cfg, err := LoadConfig(lookupIn(ctx))
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if !tt.check(cfg) {
				t.Errorf("value not carried into Config: %+v", cfg)
			}
		})
	}
}

// Each combination that cannot work is refused by the app with a message
// naming the keys and the limit (the rules themselves: configrules), and
// the nearest one that works is accepted.
func TestLoadConfigRefusesCombinationsThatCannotWork(t *testing.T) {
	tests := []struct {
		name              string
		refused, accepted map[string]any
		key               string   // the key the error is reported on
		mentions          []string // other keys and the limit
	}{
		{"maxConcurrency x batchSize x 60 / ratePerMinute above the usable timeout",
			map[string]any{keyMaxConcurrency: "20"}, map[string]any{keyMaxConcurrency: "10"},
			keyMaxConcurrency, []string{keyBatchSize, keyRatePerMinute, keyPredictorTimeoutSeconds, keyFinishReserveSeconds, "200 s", "105 s"}},
		{"ratePerMinute above the shared pacer's write ceiling",
			map[string]any{keyRatePerMinute: "1000000", keyBatchSize: "1"},
			map[string]any{keyRatePerMinute: "1000000", keyBatchSize: "1", keyPacing: "instance"},
			keyRatePerMinute, []string{keyPacing, "30000 a minute"}},
		{"predictorMemoryMb too small for oversize=downscale",
			map[string]any{keyPredictorMemoryMB: "128"}, map[string]any{keyPredictorMemoryMB: "128", keyOversize: "reject"},
			keyPredictorMemoryMB, []string{keyOversize, "at least 328"}},
		{"dlqMaxReceiveCount below 5",
			map[string]any{keyDLQMaxReceiveCount: "1"}, map[string]any{keyDLQMaxReceiveCount: "5"},
			keyDLQMaxReceiveCount, []string{"at least 5"}},
		{"maxConcurrency above what the account's default quota leaves one function",
			map[string]any{keyMaxConcurrency: "901", keyBatchSize: "1", keyRatePerMinute: "60000", keyPacing: "instance"},
			map[string]any{keyMaxConcurrency: "901", keyBatchSize: "1", keyRatePerMinute: "60000", keyPacing: "instance", keyAccountConcurrencyLimit: "1001"},
			keyMaxConcurrency, []string{keyAccountConcurrencyLimit, "at most 900"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := defaultContext(t)
			maps.Copy(ctx, tt.refused)
			_, err := LoadConfig(lookupIn(ctx))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), `context key "`+tt.key+`"`) {
				t.Errorf("error %q is not reported on %q", err, tt.key)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			ctx = defaultContext(t)
			maps.Copy(ctx, tt.accepted)
			if _, err := LoadConfig(lookupIn(ctx)); err != nil {
				t.Errorf("the nearest working configuration is refused: %v", err)
			}
		})
	}
	// A key already reported bad is not judged again as zero by the rules.
	ctx := defaultContext(t)
	ctx[keyBatchSize] = "eleven"
	ctx[keyMaxConcurrency] = "1000"
	_, err := LoadConfig(lookupIn(ctx))
	if err == nil || strings.Count(err.Error(), "context key") != 1 {
		t.Errorf("err = %v, want only the batchSize error", err)
	}
}

func TestLoadConfigRejectsBadValues(t *testing.T) {
	tests := []struct {
		key     string
		value   any
		allowed string // the allowed range the message must state
	}{
		{keyBatchSize, "0", "from 1 to 10"},
		{keyBatchSize, 11.0, "from 1 to 10"},
		{keyBatchSize, 2.5, "whole number"},
		{keyBatchSize, "five", "from 1 to 10"},
		{keyMaxConcurrency, "1", "from 2 to 1000"},
		{keyMaxConcurrency, "1001", "from 2 to 1000"},
		{keyTopN, "0", "from 1 to 15"},
		{keyTopN, "16", "from 1 to 15"},
		{keyRatePerMinute, "0", "from 1 to"},
		{keyPredictorTimeoutSeconds, "901", "to 900"},
		{keyPredictorMemoryMB, "127", "from 128 to 10240"},
		{keyPredictorMemoryMB, "10241", "from 128 to 10240"},
		{keyMonitorScheduleMinutes, "0", "from 1 to 1440"},
		{keyMonitorScheduleMinutes, "1441", "from 1 to 1440"},
		{keyDLQMaxReceiveCount, "0", "from 1 to 1000"},
		{keyAccountConcurrencyLimit, "9", "from 10 to"},
		{keyNotifications, "sns", "s3 or eventbridge"},
		{keyEvents, "", "true or false"},
		{keyEventBusName, "arn:aws:events:eu-west-1:123456789012:event-bus/x", "name of an existing event bus"},
		{keyLogRetentionDays, "2", "one of 1, 3, 5, 7, 14"},
		{keyLogRetentionDays, "", "one of 1, 3"},
		{keyLogLevel, "verbose", "DEBUG, INFO, WARN or ERROR"},
		{keyModelFallback, "maybe", "true or false"},
		{keyPacing, "both", "shared or instance"},
		{keyRemoveOnDestroy, "yes please", "true or false"},
		{keyFailedPredictionRateThreshold, "101", "from 0 to 100"},
		{keyCreditsLowThreshold, "-1", "from 0 to"},
		{keyCreditsForecastDays, "0", "from 1 to 365"},
		{keyQueueAgeAlarmSeconds, "59", "from 60 to 864000"},
		{keyQueueAgeAlarmSeconds, "864001", "from 60 to 864000"},
		{keyDailyCreditBudget, "-5", "from 0 to"},
		{keyRecordTTLDays, "-1", "from 0 to"},
		{keyAPIURL, "http://geo.test.invalid", "https://"},
		{keyAPIURL, "https://geo.test.invalid/?key=x", "https://"},
		{keyAPIURL, "https://user:pw@geo.test.invalid", "https://"},
		{keyAPIURL, "geo.test.invalid", "https://"},
		{keyAPIKeyHeader, "X Service Key", "HTTP header name"},
		{keyAPIKeyHeader, "Authorization", "another purpose"},
		{keyAlarmEmail, "not an address", "e-mail address"},
		{keyAlarmEmail, "Ops <ops@example.com>", "plain e-mail address"},
		{keyExistingBucketName, "Bad_Bucket", "S3 bucket name"},
		{keyExistingSecretArn, "arn:aws:s3:::bucket", "complete secret ARN"},
		{keyExistingSecretName, "bad name!", "secret name"},
		{keyExistingBucketKmsKeyArn, "alias/uploads", "KMS key ARN"},
		{keyExistingBucketKmsKeyArn, "arn:aws:kms:eu-west-1:123456789012:alias/uploads", "not an alias"},
		{keyExistingSecretKmsKeyArn, "1234abcd-12ab-34cd-56ef-1234567890ab", "KMS key ARN"},
		{keyExistingSecretKmsKeyArn, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123", "KMS key ARN"},
		{keyUploadPrefix, "/uploads/", "not starting with /"},
		{keyModelID, "a model", "model id"},
		{keyStackName, "1stack", "starting with a letter"},
		{keyNoncurrentVersionDays, "0", "from 1 to 3650"},
		{keyNoncurrentVersionDays, "3651", "from 1 to 3650"},
		{keyNoncurrentVersionDays, "", "is missing"},
		{keyMaxImageBytes, "0", "from 1 to 104857600"},
		{keyMaxImageBytes, "104857601", "from 1 to 104857600"},
		{keyMaxImageBytes, "10MB", "from 1 to 104857600"},
		{keyFinishReserveSeconds, "1", "from 2 to 300"},
		{keyFinishReserveSeconds, "301", "from 2 to 300"},
		{keyFinishReserveSeconds, "60", "less than half of predictorTimeoutSeconds (120), so at most 59"},
		{keyExifGPS, "trust", "one of predict, skip, ignore"},
		{keyOversize, "crop", "one of downscale, reject"},
		{keyUploadMetadata, "ignore", "one of strip, keep"},
		{keyReuseResults, "object", "one of content, off"},
		{keyReuseMaxAgeDays, "-1", "from 0 to"},
		{keyDownscaleMaxSidePx, "511", "from 512 to 16384"},
		{keyDownscaleMaxSidePx, "16385", "from 512 to 16384"},
		{keyDownscaleMaxSidePx, "4k", "from 512 to 16384"},
		{keyMaxServerDelaySeconds, "0", "from 1 to 43200"},
		{keyMaxServerDelaySeconds, "43201", "from 1 to 43200"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+toText(tt.value), func(t *testing.T) {
			ctx := defaultContext(t)
			ctx[tt.key] = tt.value
			_, err := LoadConfig(lookupIn(ctx))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, `"`+tt.key+`"`) || !strings.Contains(msg, tt.allowed) {
				t.Errorf("message %q must name %q and state %q", msg, tt.key, tt.allowed)
			}
		})
	}
}

func TestLoadConfigDefaultsOfVersionsImagesAndReserve(t *testing.T) {
	cfg, err := LoadConfig(lookupIn(defaultContext(t)))
	if err != nil {
		t.Fatalf("cdk.json defaults rejected: %v", err)
	}
	if cfg.NoncurrentVersionDays != 30 || cfg.MaxImageBytes != 10_000_000 || cfg.FinishReserve != 10*time.Second {
		t.Errorf("NoncurrentVersionDays %d, MaxImageBytes %d, FinishReserve %v; want 30, 10000000, 10s",
			cfg.NoncurrentVersionDays, cfg.MaxImageBytes, cfg.FinishReserve)
	}
}

func TestLoadConfigFinishReserveUnderHalfTheTimeout(t *testing.T) {
	for _, tt := range []struct {
		timeout, reserve string
		ok               bool
	}{
		{"30", "14", true},
		{"30", "15", false}, // exactly half
		{"31", "15", true},
		{"900", "300", true},
		{"120", "100", false},
	} {
		t.Run(tt.timeout+"/"+tt.reserve, func(t *testing.T) {
			ctx := defaultContext(t)
			ctx[keyPredictorTimeoutSeconds] = tt.timeout
			ctx[keyFinishReserveSeconds] = tt.reserve
			ctx[keyBatchSize] = "1" // a round of 4 s of slots fits the shortest timeout's wait
			cfg, err := LoadConfig(lookupIn(ctx))
			switch {
			case tt.ok && err != nil:
				t.Fatalf("rejected: %v", err)
			case !tt.ok && err == nil:
				t.Fatalf("accepted a reserve of %v with a %v timeout", cfg.FinishReserve, cfg.PredictorTimeout)
			case !tt.ok && (!strings.Contains(err.Error(), `"`+keyFinishReserveSeconds+`"`) || !strings.Contains(err.Error(), "less than half of "+keyPredictorTimeoutSeconds)):
				t.Errorf("message %q must name %q and say it must be less than half of %s", err, keyFinishReserveSeconds, keyPredictorTimeoutSeconds)
			}
		})
	}
	// A bad timeout is reported once, as the timeout's error alone.
	ctx := defaultContext(t)
	ctx[keyPredictorTimeoutSeconds] = "5"
	_, err := LoadConfig(lookupIn(ctx))
	if err == nil || strings.Contains(err.Error(), `"`+keyFinishReserveSeconds+`"`) {
		t.Errorf("err = %v, want only the %s error", err, keyPredictorTimeoutSeconds)
	}
}

func TestLoadConfigRejectsBothSecretSources(t *testing.T) {
	ctx := defaultContext(t)
	ctx[keyExistingSecretName] = "geo/key"
	ctx[keyExistingSecretArn] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123"
	_, err := LoadConfig(lookupIn(ctx))
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("err = %v, want a 'not both' error", err)
	}
}

func TestLoadConfigReportsEveryBadKeyAtOnce(t *testing.T) {
	ctx := defaultContext(t)
	ctx[keyBatchSize] = "0"
	ctx[keyTopN] = "99"
	delete(ctx, keyRatePerMinute)
	_, err := LoadConfig(lookupIn(ctx))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, key := range []string{keyBatchSize, keyTopN, keyRatePerMinute} {
		if !strings.Contains(err.Error(), `"`+key+`"`) {
			t.Errorf("error does not name %q: %v", key, err)
		}
	}
	if !strings.Contains(err.Error(), "is missing") {
		t.Errorf("missing key not reported as missing: %v", err)
	}
}

func TestCDKJSONListsEveryKey(t *testing.T) {
	// Every key LoadConfig reads has its documented default in cdk.json.
	ctx := cdkJSONContext(t)
	seen := map[string]bool{}
	_, _ = LoadConfig(func(key string) any { seen[key] = true; return nil })
	for _, key := range slices.Sorted(maps.Keys(seen)) {
		if _, ok := ctx[key]; !ok {
			t.Errorf("cdk.json context has no default for %q", key)
		}
	}
}

func toText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestLoadConfigKMSKeysOfExistingData(t *testing.T) {
	const key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	const mrk = "arn:aws-cn:kms:cn-north-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab"
	ctx := defaultContext(t)
	ctx[keyExistingBucketName] = "my-uploads"
	ctx[keyExistingBucketKmsKeyArn] = key
	ctx[keyExistingSecretArn] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123"
	ctx[keyExistingSecretKmsKeyArn] = mrk
	cfg, err := LoadConfig(lookupIn(ctx))
	if err != nil {
		t.Fatalf("rejected: %v", err)
	}
	if cfg.ExistingBucketKmsKeyArn != key || cfg.ExistingSecretKmsKeyArn != mrk {
		t.Errorf("keys not carried into Config: %q %q", cfg.ExistingBucketKmsKeyArn, cfg.ExistingSecretKmsKeyArn)
	}

	// A key without the existing data it decrypts is a mistake.
	ctx = defaultContext(t)
	ctx[keyExistingBucketKmsKeyArn] = key
	ctx[keyExistingSecretKmsKeyArn] = key
	_, err = LoadConfig(lookupIn(ctx))
	for _, want := range []string{`"` + keyExistingBucketKmsKeyArn + `": is set but ` + keyExistingBucketName, `"` + keyExistingSecretKmsKeyArn + `": is set but ` + keyExistingSecretName} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestPacingModesAreThePredictors(t *testing.T) {
	if pacingShared != predictorpkg.PacingShared || pacingInstance != predictorpkg.PacingInstance {
		t.Errorf("infra's pacing modes %q, %q differ from the predictor's %q, %q",
			pacingShared, pacingInstance, predictorpkg.PacingShared, predictorpkg.PacingInstance)
	}
}

func TestLoadConfigDefaultsOfPhotoOptionsAndMemory(t *testing.T) {
	cfg, err := LoadConfig(lookupIn(defaultContext(t)))
	if err != nil {
		t.Fatalf("cdk.json defaults rejected: %v", err)
	}
	if cfg.ExifGPS != "predict" || cfg.Oversize != "downscale" || cfg.DownscaleMaxSidePx != 4096 {
		t.Errorf("exifGps %q oversize %q downscaleMaxSidePx %d; want predict, downscale, 4096", cfg.ExifGPS, cfg.Oversize, cfg.DownscaleMaxSidePx)
	}
	if cfg.UploadMetadata != "strip" {
		t.Errorf("uploadMetadata %q; want strip: photos leave without their owner's metadata unless the operator says otherwise", cfg.UploadMetadata)
	}
	// Set by measurement: the worst photo people take that is over the
	// limit, a 61 MP full-frame camera JPEG, peaks at about 280 MB of RSS
	// downscaled (8-bit 48 MP PNG: 380 MB), the predictor's own 15-40 MB
	// besides; 512 MB keeps the JPEG under 80% with the batch's other
	// workers, their heads and downscaled JPEGs, and the runtime. What does
	// not fit is refused from its header by the downscale's memory budget.
	if cfg.PredictorMemoryMB < 512 {
		t.Errorf("predictorMemoryMb default %d, want at least 512 for the downscale path", cfg.PredictorMemoryMB)
	}
}

func TestPhotoOptionsAreThePredictors(t *testing.T) {
	if exifGPSPredict != predictorpkg.ExifGPSPredict || exifGPSSkip != predictorpkg.ExifGPSSkip || exifGPSIgnore != predictorpkg.ExifGPSIgnore ||
		oversizeDownscale != predictorpkg.OversizeDownscale || oversizeReject != predictorpkg.OversizeReject ||
		uploadMetadataStrip != predictorpkg.UploadMetadataStrip || uploadMetadataKeep != predictorpkg.UploadMetadataKeep ||
		reuseContent != predictorpkg.ReuseContent || reuseOff != predictorpkg.ReuseOff ||
		minDownscaleMaxSidePx != predictorpkg.MinDownscaleMaxSide {
		t.Error("infra's exifGps/oversize values or downscale bound differ from the predictor's")
	}
	// The predictor's own default must be what cdk.json deploys.
	if ctx := cdkJSONContext(t); toText(ctx[keyDownscaleMaxSidePx]) != strconv.Itoa(predictorpkg.DefaultDownscaleMaxSide) {
		t.Errorf("cdk.json %s = %v, predictor default %d", keyDownscaleMaxSidePx, ctx[keyDownscaleMaxSidePx], predictorpkg.DefaultDownscaleMaxSide)
	}
	if ctx := cdkJSONContext(t); toText(ctx[keyMaxServerDelaySeconds]) != strconv.Itoa(int(predictorpkg.DefaultMaxServerDelay.Seconds())) ||
		predictorpkg.MaxMaxServerDelay != 43200*time.Second {
		t.Errorf("cdk.json %s = %v, predictor default %v and bound %v", keyMaxServerDelaySeconds, ctx[keyMaxServerDelaySeconds],
			predictorpkg.DefaultMaxServerDelay, predictorpkg.MaxMaxServerDelay)
	}
}

func TestGoMemLimitLeavesHeadroomUnderTheFunctionMemory(t *testing.T) {
	for _, tt := range []struct {
		memoryMB int
		want     string
	}{
		{1024, "921MiB"},
		{128, "115MiB"},
		{10240, "9216MiB"},
	} {
		if got := goMemLimit(tt.memoryMB); got != tt.want {
			t.Errorf("goMemLimit(%d) = %q, want %q", tt.memoryMB, got, tt.want)
		}
	}
}

// TestLoadAppConfigRefusesUnknownSettings: a misspelled -c key was ignored
// without a word (-c alarmEmial=... synthesized alarms that page nobody);
// the app refuses it with the closest setting, and leaves the CDK's own
// keys (feature flags, aws:cdk:..., cached lookups, acknowledged notices)
// alone. cdk.json itself holds no unknown key.
func TestLoadAppConfigRefusesUnknownSettings(t *testing.T) {
	if _, err := LoadAppConfig(defaultContext(t)); err != nil {
		t.Fatalf("cdk.json with apiUrl refused: %v", err)
	}
	cdkOwn := defaultContext(t)
	for key, value := range map[string]any{
		"aws:cdk:enable-path-metadata":                             true,
		"availability-zones:account=123456789012:region=eu-west-1": []any{"eu-west-1a"},
		"acknowledged-issue-numbers":                               []any{float64(32775)},
		"cli-telemetry":                                            false,
		"@aws-cdk/aws-lambda:recognizeVersionProps":                true,
	} {
		cdkOwn[key] = value
	}
	if _, err := LoadAppConfig(cdkOwn); err != nil {
		t.Errorf("the CDK's own keys refused: %v", err)
	}
	for typo, want := range map[string]string{
		"alarmEmial":     "unknown setting alarmEmial; did you mean alarmEmail?",
		"ratePerMinutes": "unknown setting ratePerMinutes; did you mean ratePerMinute?",
		"BatchSize":      "unknown setting BatchSize; did you mean batchSize?",
		"colour":         "unknown setting colour; the settings are listed in docs/configuration.md",
	} {
		ctx := defaultContext(t)
		ctx[typo] = "x"
		_, err := LoadAppConfig(ctx)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-c %s=x: err = %v, want %q", typo, err, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"alarmemial", "alarmemail", 1}, {"ab", "ba", 1}, {"batchsize", "batchsize", 0},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
