package main

import (
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"

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
	ctx[settings.APIURL.Key] = fakeAPIURL
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
	if want := time.Duration(ctx[settings.MonitorScheduleMinutes.Key].(float64)) * time.Minute; cfg.MonitorSchedule != want {
		t.Errorf("MonitorSchedule = %v, want %v", cfg.MonitorSchedule, want)
	}
	if want := time.Duration(ctx[settings.PredictorTimeoutSeconds.Key].(float64)) * time.Second; cfg.PredictorTimeout != want {
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
	largest := map[string]any{settings.AccountConcurrencyLimit.Key: "2000", settings.RatePerMinute.Key: "30000", settings.BatchSize.Key: "1"}
	tests := []struct {
		key   string
		value any
		check func(Config) bool
		with  map[string]any // other keys the value needs
	}{
		{settings.BatchSize.Key, "10", func(c Config) bool { return c.BatchSize == 10 }, nil}, // -c values arrive as strings
		{settings.BatchSize.Key, 1.0, func(c Config) bool { return c.BatchSize == 1 }, nil},
		{settings.MaxConcurrency.Key, "2", func(c Config) bool { return c.MaxConcurrency == 2 }, nil},
		{settings.MaxConcurrency.Key, 1000.0, func(c Config) bool { return c.MaxConcurrency == 1000 }, largest},
		{settings.AccountConcurrencyLimit.Key, "10", func(c Config) bool { return c.AccountConcurrencyLimit == 10 }, nil},
		{settings.Notifications.Key, "EventBridge", func(c Config) bool { return c.Notifications == notificationsEventBridge }, nil},
		{settings.Notifications.Key, "", func(c Config) bool { return c.Notifications == notificationsS3 }, nil},
		{settings.Notifications.Key, "s3", func(c Config) bool { return c.Notifications == notificationsS3 },
			map[string]any{settings.ExistingBucketName.Key: "shared-bucket"}},
		{settings.ExistingBucketName.Key, "shared-bucket", func(c Config) bool { return c.Notifications == notificationsEventBridge }, nil},
		{settings.DLQMaxReceiveCount.Key, "5", func(c Config) bool { return c.DLQMaxReceiveCount == 5 }, nil},
		{settings.TopN.Key, "", func(c Config) bool { return c.TopN == 0 }, nil},
		{settings.TopN.Key, "15", func(c Config) bool { return c.TopN == 15 }, nil},
		{settings.TopN.Key, 1.0, func(c Config) bool { return c.TopN == 1 }, nil},
		{settings.PredictorTimeoutSeconds.Key, "900", func(c Config) bool { return c.PredictorTimeout == 15*time.Minute }, nil},
		{settings.PredictorMemoryMB.Key, "10240", func(c Config) bool { return c.PredictorMemoryMB == 10240 }, nil},
		{settings.MonitorScheduleMinutes.Key, "1440", func(c Config) bool { return c.MonitorSchedule == 24*time.Hour }, nil},
		{settings.LogRetentionDays.Key, "3653", func(c Config) bool { return c.LogRetentionDays == 3653 }, nil},
		{settings.LogLevel.Key, "debug", func(c Config) bool { return c.LogLevel == "DEBUG" }, nil},
		{settings.ModelFallback.Key, "false", func(c Config) bool { return !c.ModelFallback }, nil},
		{settings.RemoveOnDestroy.Key, true, func(c Config) bool { return c.RemoveOnDestroy }, nil},
		{settings.APIURL.Key, "https://geo.test.invalid/", func(c Config) bool { return c.APIURL == "https://geo.test.invalid" }, nil},
		{settings.APIKeyHeader.Key, "X-Geo-Api-Key", func(c Config) bool { return c.APIKeyHeader == "X-Geo-Api-Key" }, nil},
		{settings.APIKeyHeader.Key, "", func(c Config) bool { return c.APIKeyHeader == "X-Service-Key" }, nil},
		{settings.AlarmEmail.Key, "ops@example.com", func(c Config) bool { return c.AlarmEmail == "ops@example.com" }, nil},
		{settings.ExistingBucketName.Key, "my.upload-bucket-1", func(c Config) bool { return c.ExistingBucketName == "my.upload-bucket-1" }, nil},
		{settings.ExistingSecretArn.Key, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123", func(c Config) bool { return c.ExistingSecretArn != "" }, nil},
		{settings.ExistingBucketKmsKeyArn.Key, "", func(c Config) bool { return c.ExistingBucketKmsKeyArn == "" }, nil},
		{settings.FailedPredictionRateThreshold.Key, "0.5", func(c Config) bool { return c.FailedPredictionRateThreshold == 0.5 }, nil},
		// The least a job's planned backlog (a 1-minute window) allows.
		{settings.QueueAgeAlarmSeconds.Key, "121", func(c Config) bool { return c.QueueAgeAlarm == 121*time.Second },
			map[string]any{settings.JobWindowMinutes.Key: "1"}},
		{settings.NoncurrentVersionDays.Key, "1", func(c Config) bool { return c.NoncurrentVersionDays == 1 }, nil},
		{settings.NoncurrentVersionDays.Key, 3650.0, func(c Config) bool { return c.NoncurrentVersionDays == 3650 }, nil},
		{settings.MaxImageBytes.Key, "1", func(c Config) bool { return c.MaxImageBytes == 1 }, nil},
		{settings.MaxImageBytes.Key, "104857600", func(c Config) bool { return c.MaxImageBytes == 104857600 }, nil},
		{settings.FinishReserveSeconds.Key, "2", func(c Config) bool { return c.FinishReserve == 2*time.Second }, nil},
		{settings.FinishReserveSeconds.Key, 59.0, func(c Config) bool { return c.FinishReserve == 59*time.Second }, nil}, // under half of the default 120 s
		{settings.ExifGPS.Key, "skip", func(c Config) bool { return c.ExifGPS == "skip" }, nil},
		{settings.Events.Key, "false", func(c Config) bool { return !c.Events }, nil},
		{settings.EventBusName.Key, "orders/geo-results_1.x", func(c Config) bool { return c.EventBusName == "orders/geo-results_1.x" && c.Events }, nil},
		{settings.ExifGPS.Key, "IGNORE", func(c Config) bool { return c.ExifGPS == "ignore" }, nil},
		{settings.ExifGPS.Key, "", func(c Config) bool { return c.ExifGPS == "predict" }, nil},
		{settings.Oversize.Key, "reject", func(c Config) bool { return c.Oversize == "reject" }, nil},
		{settings.Oversize.Key, "", func(c Config) bool { return c.Oversize == "downscale" }, nil},
		{settings.UploadMetadata.Key, "Keep", func(c Config) bool { return c.UploadMetadata == "keep" }, nil},
		{settings.UploadMetadata.Key, "", func(c Config) bool { return c.UploadMetadata == "strip" }, nil},
		{settings.ReuseResults.Key, "Off", func(c Config) bool { return c.ReuseResults == "off" }, nil},
		{settings.ReuseResults.Key, "", func(c Config) bool { return c.ReuseResults == "content" }, nil},
		{settings.ReuseMaxAgeDays.Key, "30", func(c Config) bool { return c.ReuseMaxAgeDays == 30 }, nil},
		{settings.DownscaleMaxSidePx.Key, "512", func(c Config) bool { return c.DownscaleMaxSidePx == 512 }, nil},
		{settings.DownscaleMaxSidePx.Key, 16384.0, func(c Config) bool { return c.DownscaleMaxSidePx == 16384 }, nil},
		{settings.MaxServerDelaySeconds.Key, "1", func(c Config) bool { return c.MaxServerDelay == time.Second }, nil},
		{settings.MaxServerDelaySeconds.Key, 43200.0, func(c Config) bool { return c.MaxServerDelay == 12*time.Hour }, nil},
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
			map[string]any{settings.MaxConcurrency.Key: "20"}, map[string]any{settings.MaxConcurrency.Key: "10"},
			settings.MaxConcurrency.Key, []string{settings.BatchSize.Key, settings.RatePerMinute.Key, settings.PredictorTimeoutSeconds.Key, settings.FinishReserveSeconds.Key, "200 s", "105 s"}},
		{"ratePerMinute above what the pacing was proven to keep, with either pacing",
			map[string]any{settings.RatePerMinute.Key: "30001", settings.Pacing.Key: "instance"},
			map[string]any{settings.RatePerMinute.Key: "30000", settings.Pacing.Key: "instance"},
			settings.RatePerMinute.Key, []string{"from 1 to 30000", "proven", "docs/benchmarks.md"}},
		{"predictorMemoryMb too small for oversize=downscale",
			map[string]any{settings.PredictorMemoryMB.Key: "128"}, map[string]any{settings.PredictorMemoryMB.Key: "128", settings.Oversize.Key: "reject"},
			settings.PredictorMemoryMB.Key, []string{settings.Oversize.Key, "at least 328"}},
		{"dlqMaxReceiveCount below 5",
			map[string]any{settings.DLQMaxReceiveCount.Key: "1"}, map[string]any{settings.DLQMaxReceiveCount.Key: "5"},
			settings.DLQMaxReceiveCount.Key, []string{"at least 5"}},
		{"maxConcurrency above what the account's default quota leaves one function",
			map[string]any{settings.MaxConcurrency.Key: "901", settings.BatchSize.Key: "1", settings.RatePerMinute.Key: "30000", settings.Pacing.Key: "instance"},
			map[string]any{settings.MaxConcurrency.Key: "901", settings.BatchSize.Key: "1", settings.RatePerMinute.Key: "30000", settings.Pacing.Key: "instance", settings.AccountConcurrencyLimit.Key: "1001"},
			settings.MaxConcurrency.Key, []string{settings.AccountConcurrencyLimit.Key, "at most 900"}},
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
	ctx[settings.BatchSize.Key] = "eleven"
	ctx[settings.MaxConcurrency.Key] = "1000"
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
		{settings.BatchSize.Key, "0", "from 1 to 10"},
		{settings.BatchSize.Key, 11.0, "from 1 to 10"},
		{settings.BatchSize.Key, 2.5, "whole number"},
		{settings.BatchSize.Key, "five", "from 1 to 10"},
		{settings.MaxConcurrency.Key, "1", "from 2 to 1000"},
		{settings.MaxConcurrency.Key, "1001", "from 2 to 1000"},
		{settings.TopN.Key, "0", "from 1 to 15"},
		{settings.TopN.Key, "16", "from 1 to 15"},
		{settings.RatePerMinute.Key, "0", "from 1 to"},
		{settings.PredictorTimeoutSeconds.Key, "901", "to 900"},
		{settings.PredictorMemoryMB.Key, "127", "from 128 to 10240"},
		{settings.PredictorMemoryMB.Key, "10241", "from 128 to 10240"},
		{settings.MonitorScheduleMinutes.Key, "0", "from 1 to 1440"},
		{settings.MonitorScheduleMinutes.Key, "1441", "from 1 to 1440"},
		{settings.DLQMaxReceiveCount.Key, "0", "from 1 to 1000"},
		{settings.AccountConcurrencyLimit.Key, "9", "from 10 to"},
		{settings.Notifications.Key, "sns", "s3 or eventbridge"},
		{settings.Events.Key, "", "true or false"},
		{settings.EventBusName.Key, "arn:aws:events:eu-west-1:123456789012:event-bus/x", "name of an existing event bus"},
		{settings.LogRetentionDays.Key, "2", "one of 1, 3, 5, 7, 14"},
		{settings.LogRetentionDays.Key, "", "one of 1, 3"},
		{settings.LogLevel.Key, "verbose", "DEBUG, INFO, WARN or ERROR"},
		{settings.ModelFallback.Key, "maybe", "true or false"},
		{settings.Pacing.Key, "both", "shared or instance"},
		{settings.RemoveOnDestroy.Key, "yes please", "true or false"},
		{settings.FailedPredictionRateThreshold.Key, "101", "from 0 to 100"},
		{settings.CreditsLowThreshold.Key, "-1", "from 0 to"},
		{settings.CreditsForecastDays.Key, "0", "from 1 to 365"},
		{settings.QueueAgeAlarmSeconds.Key, "59", "from 60 to 864000"},
		{settings.QueueAgeAlarmSeconds.Key, "864001", "from 60 to 864000"},
		{settings.DailyCreditBudget.Key, "-5", "from 0 to"},
		{settings.RecordTTLDays.Key, "-1", "from 0 to"},
		{settings.APIURL.Key, "http://geo.test.invalid", "https://"},
		{settings.APIURL.Key, "https://geo.test.invalid/?key=x", "https://"},
		{settings.APIURL.Key, "https://user:pw@geo.test.invalid", "https://"},
		{settings.APIURL.Key, "geo.test.invalid", "https://"},
		{settings.APIKeyHeader.Key, "X Service Key", "HTTP header name"},
		{settings.APIKeyHeader.Key, "Authorization", "another purpose"},
		{settings.AlarmEmail.Key, "not an address", "e-mail address"},
		{settings.AlarmEmail.Key, "Ops <ops@example.com>", "plain e-mail address"},
		{settings.ExistingBucketName.Key, "Bad_Bucket", "S3 bucket name"},
		{settings.ExistingSecretArn.Key, "arn:aws:s3:::bucket", "complete secret ARN"},
		{settings.ExistingSecretName.Key, "bad name!", "secret name"},
		{settings.ExistingBucketKmsKeyArn.Key, "alias/uploads", "KMS key ARN"},
		{settings.ExistingBucketKmsKeyArn.Key, "arn:aws:kms:eu-west-1:123456789012:alias/uploads", "not an alias"},
		{settings.ExistingSecretKmsKeyArn.Key, "1234abcd-12ab-34cd-56ef-1234567890ab", "KMS key ARN"},
		{settings.ExistingSecretKmsKeyArn.Key, "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123", "KMS key ARN"},
		{settings.UploadPrefix.Key, "/uploads/", "not starting with /"},
		{settings.UploadPrefix.Key, "{raw}/", `holds '{', which S3's object key naming guidelines list among the characters to avoid`},
		{settings.UploadSuffix.Key, "a\tb.jpg", "non-printable character U+0009"},
		{settings.ModelID.Key, "a model", "model id"},
		{settings.StackName.Key, "1stack", "starting with a letter"},
		{settings.NoncurrentVersionDays.Key, "0", "from 1 to 3650"},
		{settings.NoncurrentVersionDays.Key, "3651", "from 1 to 3650"},
		{settings.NoncurrentVersionDays.Key, "", "is missing"},
		{settings.MaxImageBytes.Key, "0", "from 1 to 104857600"},
		{settings.MaxImageBytes.Key, "104857601", "from 1 to 104857600"},
		{settings.MaxImageBytes.Key, "10MB", "from 1 to 104857600"},
		{settings.FinishReserveSeconds.Key, "1", "from 2 to 300"},
		{settings.FinishReserveSeconds.Key, "301", "from 2 to 300"},
		{settings.FinishReserveSeconds.Key, "60", "less than half of predictorTimeoutSeconds (120), so at most 59"},
		{settings.ExifGPS.Key, "trust", "one of predict, skip, ignore"},
		{settings.Oversize.Key, "crop", "one of downscale, reject"},
		{settings.UploadMetadata.Key, "ignore", "one of strip, keep"},
		{settings.ReuseResults.Key, "object", "one of content, off"},
		{settings.ReuseMaxAgeDays.Key, "-1", "from 0 to"},
		{settings.DownscaleMaxSidePx.Key, "511", "from 512 to 16384"},
		{settings.DownscaleMaxSidePx.Key, "16385", "from 512 to 16384"},
		{settings.DownscaleMaxSidePx.Key, "4k", "from 512 to 16384"},
		{settings.MaxServerDelaySeconds.Key, "0", "from 1 to 43200"},
		{settings.MaxServerDelaySeconds.Key, "43201", "from 1 to 43200"},
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
			ctx[settings.PredictorTimeoutSeconds.Key] = tt.timeout
			ctx[settings.FinishReserveSeconds.Key] = tt.reserve
			ctx[settings.BatchSize.Key] = "1" // a round of 4 s of slots fits the shortest timeout's wait
			cfg, err := LoadConfig(lookupIn(ctx))
			switch {
			case tt.ok && err != nil:
				t.Fatalf("rejected: %v", err)
			case !tt.ok && err == nil:
				t.Fatalf("accepted a reserve of %v with a %v timeout", cfg.FinishReserve, cfg.PredictorTimeout)
			case !tt.ok && (!strings.Contains(err.Error(), `"`+settings.FinishReserveSeconds.Key+`"`) || !strings.Contains(err.Error(), "less than half of "+settings.PredictorTimeoutSeconds.Key)):
				t.Errorf("message %q must name %q and say it must be less than half of %s", err, settings.FinishReserveSeconds.Key, settings.PredictorTimeoutSeconds.Key)
			}
		})
	}
	// A bad timeout is reported once, as the timeout's error alone.
	ctx := defaultContext(t)
	ctx[settings.PredictorTimeoutSeconds.Key] = "5"
	_, err := LoadConfig(lookupIn(ctx))
	if err == nil || strings.Contains(err.Error(), `"`+settings.FinishReserveSeconds.Key+`"`) {
		t.Errorf("err = %v, want only the %s error", err, settings.PredictorTimeoutSeconds.Key)
	}
}

func TestLoadConfigRejectsBothSecretSources(t *testing.T) {
	ctx := defaultContext(t)
	ctx[settings.ExistingSecretName.Key] = "geo/key"
	ctx[settings.ExistingSecretArn.Key] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123"
	_, err := LoadConfig(lookupIn(ctx))
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("err = %v, want a 'not both' error", err)
	}
}

func TestLoadConfigReportsEveryBadKeyAtOnce(t *testing.T) {
	ctx := defaultContext(t)
	ctx[settings.BatchSize.Key] = "0"
	ctx[settings.TopN.Key] = "99"
	delete(ctx, settings.RatePerMinute.Key)
	_, err := LoadConfig(lookupIn(ctx))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, key := range []string{settings.BatchSize.Key, settings.TopN.Key, settings.RatePerMinute.Key} {
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
	ctx[settings.ExistingBucketName.Key] = "my-uploads"
	ctx[settings.ExistingBucketKmsKeyArn.Key] = key
	ctx[settings.ExistingSecretArn.Key] = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:geo/key-AbC123"
	ctx[settings.ExistingSecretKmsKeyArn.Key] = mrk
	cfg, err := LoadConfig(lookupIn(ctx))
	if err != nil {
		t.Fatalf("rejected: %v", err)
	}
	if cfg.ExistingBucketKmsKeyArn != key || cfg.ExistingSecretKmsKeyArn != mrk {
		t.Errorf("keys not carried into Config: %q %q", cfg.ExistingBucketKmsKeyArn, cfg.ExistingSecretKmsKeyArn)
	}

	// A key without the existing data it decrypts is a mistake.
	ctx = defaultContext(t)
	ctx[settings.ExistingBucketKmsKeyArn.Key] = key
	ctx[settings.ExistingSecretKmsKeyArn.Key] = key
	_, err = LoadConfig(lookupIn(ctx))
	for _, want := range []string{`"` + settings.ExistingBucketKmsKeyArn.Key + `": is set but ` + settings.ExistingBucketName.Key, `"` + settings.ExistingSecretKmsKeyArn.Key + `": is set but ` + settings.ExistingSecretName.Key} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
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

// TestInfraListsAreTheTables: the two facts the settings table states of
// the stack (CloudWatch Logs' retentions, the upload queue's retention)
// are the stack's own.
func TestInfraListsAreTheTables(t *testing.T) {
	var days []string
	for _, d := range slices.Sorted(maps.Keys(logRetentions)) {
		days = append(days, strconv.Itoa(d))
	}
	if !slices.Equal(days, settings.LogRetentionDays.Allowed) {
		t.Errorf("logRetentions %v, settings.LogRetentionDays allows %v", days, settings.LogRetentionDays.Allowed)
	}
	if settings.UploadQueueRetentionSeconds != uploadQueueRetentionDays*24*3600 {
		t.Errorf("settings.UploadQueueRetentionSeconds %d, the queue keeps messages %d days", settings.UploadQueueRetentionSeconds, uploadQueueRetentionDays)
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
