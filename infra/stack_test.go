package main

import (
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"

	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

type obj = map[string]any

func like(pattern obj) assertions.Matcher { return assertions.Match_ObjectLike(&pattern) }
func arrayWith(items ...any) assertions.Matcher {
	return assertions.Match_ArrayWith(&items)
}

// denyInsecureTransport matches the policy statement EnforceSSL adds.
var denyInsecureTransport = obj{
	"Effect":    "Deny",
	"Condition": obj{"Bool": obj{"aws:SecureTransport": "false"}},
}

func TestUploadBucketIsPrivateEncryptedAndLogged(t *testing.T) {
	s := synthApp(t).created
	uploadID, props := s.onlyResource(t, "AWS::S3::Bucket", func(p obj) bool { return p["LoggingConfiguration"] != nil })
	logsID, _ := s.onlyResource(t, "AWS::S3::Bucket", func(p obj) bool { return p["LoggingConfiguration"] == nil })

	if got := asJSON(props["LoggingConfiguration"].(obj)["DestinationBucketName"]); got != ref(logsID) {
		t.Errorf("access logs go to %s, want the access-log bucket %s", got, logsID)
	}
	for _, id := range []string{uploadID, logsID} {
		check(t, id+" private and encrypted", func() {
			s.template.HasResource(jsii.String("AWS::S3::Bucket"), obj{
				"DeletionPolicy": "Retain",
				"Properties": like(obj{
					"PublicAccessBlockConfiguration": obj{
						"BlockPublicAcls": true, "BlockPublicPolicy": true,
						"IgnorePublicAcls": true, "RestrictPublicBuckets": true,
					},
					"BucketEncryption": obj{"ServerSideEncryptionConfiguration": []any{
						obj{"ServerSideEncryptionByDefault": obj{"SSEAlgorithm": "AES256"}},
					}},
				}),
			})
		})
		check(t, id+" TLS only", func() {
			s.template.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), obj{
				"Bucket":         obj{"Ref": id},
				"PolicyDocument": like(obj{"Statement": arrayWith(like(denyInsecureTransport))}),
			})
		})
	}
}

func TestUploadBucketIsVersionedAndExpiresOldVersions(t *testing.T) {
	s := synthApp(t).created
	// The scenario overrides cdk.json's default, so the rule follows context.
	if want := createdContext(t)[settings.NoncurrentVersionDays.Key]; strconv.Itoa(s.cfg.NoncurrentVersionDays) != want {
		t.Errorf("NoncurrentVersionDays = %d, the scenario sets %v", s.cfg.NoncurrentVersionDays, want)
	}
	check(t, "versioned, with old versions, stale delete markers and abandoned uploads removed", func() {
		s.template.HasResourceProperties(jsii.String("AWS::S3::Bucket"), obj{
			"LoggingConfiguration":    assertions.Match_AnyValue(),
			"VersioningConfiguration": obj{"Status": "Enabled"},
			"LifecycleConfiguration": obj{"Rules": []any{like(obj{
				"Status":                         "Enabled",
				"NoncurrentVersionExpiration":    obj{"NoncurrentDays": s.cfg.NoncurrentVersionDays},
				"ExpiredObjectDeleteMarker":      true,
				"AbortIncompleteMultipartUpload": obj{"DaysAfterInitiation": abortIncompleteUploadsDays},
				// S3 refuses ExpiredObjectDeleteMarker next to an expiration
				// of current versions; nothing current is ever expired anyway.
				"ExpirationInDays": assertions.Match_Absent(),
				"Prefix":           assertions.Match_Absent(),
				"TagFilters":       assertions.Match_Absent(),
			})}},
		})
	})
	if _, logs := s.onlyResource(t, "AWS::S3::Bucket", func(p obj) bool { return p["LoggingConfiguration"] == nil }); logs["VersioningConfiguration"] != nil {
		t.Errorf("access-log bucket is versioned: %v", logs["VersioningConfiguration"])
	}
}

func TestExistingBucketIsLeftAsItIs(t *testing.T) {
	s := synthApp(t).imported
	if n := len(s.resources("AWS::S3::Bucket")); n != 0 {
		t.Errorf("imported scenario created %d buckets, want none", n)
	}
	doc := asJSON(s.doc)
	// Nothing may set the existing bucket's versioning or lifecycle, neither
	// as a resource property nor through a custom resource's permissions.
	for _, word := range []string{"VersioningConfiguration", "LifecycleConfiguration", "s3:PutBucketVersioning", "s3:PutLifecycleConfiguration"} {
		if strings.Contains(doc, word) {
			t.Errorf("imported scenario's template mentions %s", word)
		}
	}
}

func TestUploadsNotifyTheQueue(t *testing.T) {
	a := synthApp(t)
	queueID, _ := a.created.onlyResource(t, "AWS::SQS::Queue", func(p obj) bool { return p["RedrivePolicy"] != nil })
	bucketID, _ := a.created.onlyResource(t, "AWS::S3::Bucket", func(p obj) bool { return p["LoggingConfiguration"] != nil })
	check(t, "created bucket notifies on ObjectCreated with both filters", func() {
		a.created.template.HasResourceProperties(jsii.String("Custom::S3BucketNotifications"), obj{
			"BucketName": obj{"Ref": bucketID},
			"NotificationConfiguration": obj{"QueueConfigurations": []any{obj{
				"Events":   []any{"s3:ObjectCreated:*"},
				"QueueArn": obj{"Fn::GetAtt": []any{queueID, "Arn"}},
				"Filter": obj{"Key": obj{"FilterRules": assertions.Match_ArrayEquals(&[]any{
					obj{"Name": "suffix", "Value": a.created.cfg.UploadSuffix},
					obj{"Name": "prefix", "Value": a.created.cfg.UploadPrefix},
				})}},
			}}},
		})
	})
	check(t, "only the bucket may send, and only over TLS", func() {
		a.created.template.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), obj{
			"Queues": []any{obj{"Ref": queueID}},
			"PolicyDocument": like(obj{"Statement": arrayWith(
				like(denyInsecureTransport),
				// A bucket ARN has no account id: aws:SourceAccount pins it.
				obj{
					"Effect":    "Allow",
					"Principal": obj{"Service": "s3.amazonaws.com"},
					"Action":    "sqs:SendMessage",
					"Resource":  obj{"Fn::GetAtt": []any{queueID, "Arn"}},
					"Condition": obj{
						"ArnLike":      obj{"aws:SourceArn": obj{"Fn::GetAtt": []any{bucketID, "Arn"}}},
						"StringEquals": obj{"aws:SourceAccount": obj{"Ref": "AWS::AccountId"}},
					},
				},
			)}),
		})
	})
	// An existing bucket defaults to EventBridge: the bucket's own
	// notification configuration gets only the EventBridge switch (nothing
	// S3 could find overlapping), and a rule picks the uploads.
	if a.imported.cfg.Notifications != notificationsEventBridge {
		t.Fatalf("an existing bucket defaults to %q, want eventbridge", a.imported.cfg.Notifications)
	}
	check(t, "imported bucket sends its events to EventBridge and keeps its other notifications", func() {
		a.imported.template.HasResourceProperties(jsii.String("Custom::S3BucketNotifications"), obj{
			"BucketName":                a.imported.cfg.ExistingBucketName,
			"Managed":                   false,
			"NotificationConfiguration": obj{"EventBridgeConfiguration": obj{}},
		})
	})
	importedQueueID, importedDLQID := a.imported.uploadQueueIDs(t)
	ruleID, rule := a.imported.onlyResource(t, "AWS::Events::Rule", func(p obj) bool { return !isMonitorSchedule(p) && !isResultEventsCounter(p) })
	check(t, "the uploads rule: this bucket's Object Created events under the prefix and suffix, to the queue, undeliverable ones to the dead-letter queue", func() {
		a.imported.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{
			"EventPattern": obj{
				"source":      []any{"aws.s3"},
				"detail-type": []any{"Object Created"},
				"detail": obj{
					"bucket": obj{"name": []any{a.imported.cfg.ExistingBucketName}},
					// Prefix and suffix together: one wildcard.
					"object": obj{"key": []any{obj{"wildcard": "photos/*.jpg"}}},
				},
			},
			"Targets": []any{like(obj{
				"Arn":              obj{"Fn::GetAtt": []any{importedQueueID, "Arn"}},
				"DeadLetterConfig": obj{"Arn": obj{"Fn::GetAtt": []any{importedDLQID, "Arn"}}},
				"RetryPolicy":      obj{"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185},
			})},
		})
	})
	check(t, "only that rule may send to the queue", func() {
		a.imported.template.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), obj{
			"Queues": []any{obj{"Ref": importedQueueID}},
			"PolicyDocument": like(obj{"Statement": arrayWith(like(obj{
				"Principal": obj{"Service": "events.amazonaws.com"},
				// A rule ARN names the account: no aws:SourceAccount needed.
				"Condition": obj{"ArnEquals": obj{"aws:SourceArn": obj{"Fn::GetAtt": []any{ruleID, "Arn"}}}},
			}))}),
		})
	})
	if strings.Contains(asJSON(rule), "s3.amazonaws.com") || strings.Contains(asJSON(a.imported.doc), `"QueueConfigurations"`) {
		t.Error("the EventBridge path also notifies the queue from S3")
	}
	for _, tt := range []struct{ prefix, suffix, want string }{
		{"", "", "null"},
		{"a/", "", `[{"prefix":"a/"}]`},
		{"", ".jpg", `[{"suffix":".jpg"}]`},
		// A literal asterisk is escaped in a wildcard; its encoded reading
		// (%2A) needs no escape.
		{"we*ird/", ".jpg", `[{"wildcard":"we\\*ird/*.jpg"},{"wildcard":"we%2Aird/*.jpg"}]`},
		// Both readings of a key: as stored and URL-encoded.
		{"Photos 2024/", "", `[{"prefix":"Photos 2024/"},{"prefix":"Photos+2024/"}]`},
	} {
		if got := asJSON(uploadKeyMatcher(tt.prefix, tt.suffix)); got != tt.want {
			t.Errorf("key matcher of %q and %q = %s, want %s", tt.prefix, tt.suffix, got, tt.want)
		}
	}
	if n := len(a.imported.resources("AWS::S3::Bucket")); n != 0 {
		t.Errorf("imported scenario created %d buckets, want none", n)
	}
}

func TestQueuesRetryThenKeepFailures(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			queueID, dlqID := s.uploadQueueIDs(t)
			props := s.resources("AWS::SQS::Queue")[queueID]["Properties"].(obj)
			// Dead letters are stored data: kept when the stack is deleted
			// unless removeOnDestroy asks for a clean slate.
			wantPolicy := "Retain"
			if s.cfg.RemoveOnDestroy {
				wantPolicy = "Delete"
			}
			if got := s.resources("AWS::SQS::Queue")[dlqID]["DeletionPolicy"]; got != wantPolicy {
				t.Errorf("dead-letter queue DeletionPolicy = %v, want %s", got, wantPolicy)
			}

			// Lambda's guidance: at least six times the function timeout.
			if got, min := props["VisibilityTimeout"].(float64), 6*s.cfg.PredictorTimeout.Seconds(); got < min {
				t.Errorf("VisibilityTimeout = %v s, want at least %v s", got, min)
			}
			check(t, "redrive to the dead-letter queue", func() {
				s.template.HasResourceProperties(jsii.String("AWS::SQS::Queue"), obj{
					"RedrivePolicy": obj{
						"deadLetterTargetArn": obj{"Fn::GetAtt": []any{dlqID, "Arn"}},
						"maxReceiveCount":     s.cfg.DLQMaxReceiveCount,
					},
				})
			})
			// SQS keeps the upload's enqueue time in the dead-letter queue:
			// the dead-letter queue keeps messages longer than the upload
			// queue (AWS's guidance), so a late dead letter still waits days
			// there; the failures queue, SQS's maximum too.
			retention := map[string]float64{queueID: 10 * 24 * 3600, dlqID: 14 * 24 * 3600, monitoringFailuresID(t, s): 14 * 24 * 3600}
			for id, want := range retention {
				q := s.resources("AWS::SQS::Queue")[id]["Properties"].(obj)
				if q["SqsManagedSseEnabled"] != true {
					t.Errorf("%s is not encrypted: %v", id, q)
				}
				if q["MessageRetentionPeriod"] != want {
					t.Errorf("%s retention = %v s, want %v s", id, q["MessageRetentionPeriod"], want)
				}
				check(t, id+" TLS only", func() {
					s.template.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), obj{
						"Queues":         []any{obj{"Ref": id}},
						"PolicyDocument": like(obj{"Statement": arrayWith(like(denyInsecureTransport))}),
					})
				})
			}
		})
	}
}

func TestResultsTable(t *testing.T) {
	a := synthApp(t)
	for name, s := range a.scenarios() {
		t.Run(name, func(t *testing.T) {
			wantPolicy := "Retain"
			if s.cfg.RemoveOnDestroy {
				wantPolicy = "Delete"
			}
			check(t, "table", func() {
				s.template.HasResource(jsii.String("AWS::DynamoDB::Table"), obj{
					"DeletionPolicy": wantPolicy,
					"Properties": like(obj{
						"KeySchema": []any{
							obj{"AttributeName": tableschema.PartitionKey, "KeyType": "HASH"},
							obj{"AttributeName": tableschema.SortKey, "KeyType": "RANGE"},
						},
						"BillingMode":                      "PAY_PER_REQUEST",
						"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
						"SSESpecification":                 obj{"SSEEnabled": true},
						"TimeToLiveSpecification":          obj{"AttributeName": tableschema.TTLAttribute, "Enabled": true},
						"DeletionProtectionEnabled":        !s.cfg.RemoveOnDestroy,
						"GlobalSecondaryIndexes": []any{obj{
							"IndexName": tableschema.StatusIndex,
							"KeySchema": []any{
								obj{"AttributeName": tableschema.StatusIndexPartitionKey, "KeyType": "HASH"},
								obj{"AttributeName": tableschema.StatusIndexSortKey, "KeyType": "RANGE"},
							},
							"Projection": obj{"ProjectionType": "ALL"},
						}},
					}),
				})
			})
		})
	}
}

func TestSecret(t *testing.T) {
	a := synthApp(t)
	if n := len(a.created.resources("AWS::SecretsManager::Secret")); n != 1 {
		t.Errorf("created scenario has %d secrets, want 1", n)
	}
	if n := len(a.imported.resources("AWS::SecretsManager::Secret")); n != 0 {
		t.Errorf("imported scenario created %d secrets, want none", n)
	}
	// No value in the template: CloudFormation writes a new version when
	// SecretString or GenerateSecretString changes, which would overwrite
	// the key the operator put in.
	for id, secret := range a.created.resources("AWS::SecretsManager::Secret") {
		props := secret["Properties"].(obj)
		for _, value := range []string{"SecretString", "GenerateSecretString"} {
			if v, ok := props[value]; ok {
				t.Errorf("secret %s has an initial %s %v that a later update could write over the key", id, value, v)
			}
		}
		// A credential, not data: it goes with the stack.
		if secret["DeletionPolicy"] != "Delete" || secret["UpdateReplacePolicy"] != "Delete" {
			t.Errorf("secret %s DeletionPolicy %v, UpdateReplacePolicy %v: want Delete (no live key left behind)", id, secret["DeletionPolicy"], secret["UpdateReplacePolicy"])
		}
	}
	_, predictor := a.imported.onlyResource(t, "AWS::Lambda::Function", isPredictor)
	if got := environment(predictor)[envvars.SecretID]; got != a.imported.cfg.ExistingSecretName {
		t.Errorf("imported %s = %v, want the secret name %q", envvars.SecretID, got, a.imported.cfg.ExistingSecretName)
	}
}

func isPredictor(p obj) bool { _, ok := environment(p)[envvars.ClaimLease]; return ok }
func isMonitor(p obj) bool   { _, ok := environment(p)[envvars.HistoryTTLDays]; return ok }

// isJobFeeder: only the feeder is told the upload queue's URL.
func isJobFeeder(p obj) bool { _, ok := environment(p)[envvars.QueueURL]; return ok }

// isMonitorSchedule tells the monitor's schedule from the job feeder's and
// from the uploads rule of the EventBridge notifications mode.
func isMonitorSchedule(p obj) bool {
	return p["ScheduleExpression"] != nil && p["Description"] == "Runs the monitor"
}

// isJobFeederSchedule tells the feeder's schedule from the other rules.
func isJobFeederSchedule(p obj) bool {
	return p["ScheduleExpression"] != nil && strings.HasPrefix(fmt.Sprint(p["Description"]), "Runs the job feeder")
}

// isResultEventsCounter tells the results pipe's counting rules (events.go)
// from the uploads rule.
func isResultEventsCounter(p obj) bool {
	return strings.Contains(asJSON(p["EventPattern"]), `"source":["`+resultevents.Source+`"]`)
}

func environment(fn obj) obj {
	env, _ := fn["Environment"].(obj)
	vars, _ := env["Variables"].(obj)
	return vars
}

func TestFunctions(t *testing.T) {
	a := synthApp(t)
	for name, s := range a.scenarios() {
		t.Run(name, func(t *testing.T) {
			cfg := s.cfg
			tableID, _ := s.onlyResource(t, "AWS::DynamoDB::Table", nil)
			predictorID, predictor := s.onlyResource(t, "AWS::Lambda::Function", isPredictor)
			monitorID, monitor := s.onlyResource(t, "AWS::Lambda::Function", isMonitor)

			for id, fn := range map[string]obj{predictorID: predictor, monitorID: monitor} {
				if fn["Runtime"] != "provided.al2023" || fn["Handler"] != "bootstrap" || asJSON(fn["Architectures"]) != `["arm64"]` {
					t.Errorf("%s: runtime %v handler %v architectures %v", id, fn["Runtime"], fn["Handler"], fn["Architectures"])
				}
				logGroup := fn["LoggingConfig"].(obj)["LogGroup"].(obj)["Ref"].(string)
				if got := s.resources("AWS::Logs::LogGroup")[logGroup]["Properties"].(obj)["RetentionInDays"]; got != float64(cfg.LogRetentionDays) {
					t.Errorf("%s logs to %s with retention %v, want %d", id, logGroup, got, cfg.LogRetentionDays)
				}
				for k, v := range environment(fn) {
					if k == envvars.APIKey || strings.Contains(asJSON(v), "geo_") {
						t.Errorf("%s environment carries a key: %s", id, k)
					}
				}
			}
			if predictor["Timeout"] != cfg.PredictorTimeout.Seconds() || predictor["MemorySize"] != float64(cfg.PredictorMemoryMB) {
				t.Errorf("predictor timeout %v memory %v", predictor["Timeout"], predictor["MemorySize"])
			}

			env := environment(predictor)
			want := map[string]any{
				envvars.TableName:        obj{"Ref": tableID},
				envvars.APIURL:           cfg.APIURL,
				envvars.APIKeyHeader:     cfg.APIKeyHeader,
				envvars.ModelFallback:    strconv.FormatBool(cfg.ModelFallback),
				envvars.RatePerMinute:    strconv.Itoa(cfg.RatePerMinute),
				envvars.MaxConcurrency:   strconv.Itoa(cfg.MaxConcurrency),
				envvars.Pacing:           cfg.Pacing,
				envvars.DailyBudget:      strconv.Itoa(cfg.DailyCreditBudget),
				envvars.ClaimLease:       cfg.ClaimLease().String(),
				envvars.RecordTTLDays:    strconv.Itoa(cfg.RecordTTLDays),
				envvars.MetricNamespace:  metricnames.DefaultNamespace,
				envvars.PipelineName:     cfg.StackName,
				envvars.LogLevel:         cfg.LogLevel,
				envvars.MaxImageBytes:    strconv.Itoa(cfg.MaxImageBytes),
				envvars.FinishReserve:    cfg.FinishReserve.String(),
				envvars.BatchSize:        strconv.Itoa(cfg.BatchSize),
				envvars.FunctionTimeout:  cfg.PredictorTimeout.String(),
				envvars.ExifGPS:          cfg.ExifGPS,
				envvars.Oversize:         cfg.Oversize,
				envvars.DownscaleMaxSide: strconv.Itoa(cfg.DownscaleMaxSidePx),
				envvars.UploadMetadata:   cfg.UploadMetadata,
				envvars.ReuseResults:     cfg.ReuseResults,
				envvars.ReuseMaxAgeDays:  strconv.Itoa(cfg.ReuseMaxAgeDays),
				envGoMemLimit:            goMemLimit(cfg.PredictorMemoryMB),
			}
			want[envvars.MaxServerDelay] = strconv.Itoa(int(cfg.MaxServerDelay.Seconds()))
			if cfg.TopN != 0 {
				want[envvars.TopN] = strconv.Itoa(cfg.TopN)
			}
			if cfg.ModelID != "" {
				want[envvars.ModelID] = cfg.ModelID
			}
			for k, v := range want {
				if asJSON(env[k]) != asJSON(v) {
					t.Errorf("predictor %s = %v, want %v", k, asJSON(env[k]), asJSON(v))
				}
			}
			wantKeys := append(slices.Collect(maps.Keys(want)), envvars.SecretID, envvars.BucketName, envvars.MaxReceiveCount)
			for k := range env {
				if !slices.Contains(wantKeys, k) {
					t.Errorf("predictor has unexpected variable %s", k)
				}
			}
			if lease, err := time.ParseDuration(fmt.Sprint(env[envvars.ClaimLease])); err != nil || lease <= cfg.PredictorTimeout {
				t.Errorf("CLAIM_LEASE %v must parse and outlast the %v timeout (%v)", env[envvars.ClaimLease], cfg.PredictorTimeout, err)
			}
			if reserve, err := time.ParseDuration(fmt.Sprint(env[envvars.FinishReserve])); err != nil || reserve != cfg.FinishReserve || 2*reserve >= cfg.PredictorTimeout {
				t.Errorf("%s %v must parse to %v, under half the %v timeout (%v)", envvars.FinishReserve, env[envvars.FinishReserve], cfg.FinishReserve, cfg.PredictorTimeout, err)
			}
			// The predictor is told the receive count the queue enforces.
			_, queue := s.onlyResource(t, "AWS::SQS::Queue", func(p obj) bool { return p["RedrivePolicy"] != nil })
			enforced := queue["RedrivePolicy"].(obj)["maxReceiveCount"]
			if env[envvars.MaxReceiveCount] != fmt.Sprint(enforced) || enforced != float64(cfg.DLQMaxReceiveCount) {
				t.Errorf("predictor %s = %v, queue redrive maxReceiveCount = %v, configured %d",
					envvars.MaxReceiveCount, env[envvars.MaxReceiveCount], enforced, cfg.DLQMaxReceiveCount)
			}
			if environment(monitor)[envvars.PipelineName] != cfg.StackName {
				t.Errorf("monitor %s = %v", envvars.PipelineName, environment(monitor)[envvars.PipelineName])
			}
			// Both functions send the key in the configured header.
			if environment(monitor)[envvars.APIKeyHeader] != cfg.APIKeyHeader || cfg.APIKeyHeader == "" {
				t.Errorf("monitor %s = %v, want %q", envvars.APIKeyHeader, environment(monitor)[envvars.APIKeyHeader], cfg.APIKeyHeader)
			}

			queueID, _ := s.onlyResource(t, "AWS::SQS::Queue", func(p obj) bool { return p["RedrivePolicy"] != nil })
			check(t, "SQS event source", func() {
				s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
					"FunctionName":          obj{"Ref": predictorID},
					"EventSourceArn":        obj{"Fn::GetAtt": []any{queueID, "Arn"}},
					"BatchSize":             cfg.BatchSize,
					"ScalingConfig":         obj{"MaximumConcurrency": cfg.MaxConcurrency},
					"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
				})
			})
			failures := obj{"Fn::GetAtt": []any{monitoringFailuresID(t, s), "Arn"}}
			// Failed deliveries are retried within one schedule period, then
			// kept; failed runs are not retried but recorded.
			check(t, "monitor schedule", func() {
				s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{
					"ScheduleExpression": "rate(" + strconv.Itoa(int(cfg.MonitorSchedule.Minutes())) + " minutes)",
					"Targets": []any{like(obj{
						"Arn":              obj{"Fn::GetAtt": []any{monitorID, "Arn"}},
						"RetryPolicy":      obj{"MaximumRetryAttempts": monitorDeliveryRetries, "MaximumEventAgeInSeconds": cfg.MonitorSchedule.Seconds()},
						"DeadLetterConfig": obj{"Arn": failures},
					})},
				})
			})
			check(t, "monitor asynchronous invocations", func() {
				s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), obj{
					"FunctionName":             obj{"Ref": monitorID},
					"MaximumRetryAttempts":     0,
					"MaximumEventAgeInSeconds": cfg.MonitorSchedule.Seconds(),
					"DestinationConfig":        obj{"OnFailure": obj{"Destination": failures}},
				})
			})
		})
	}
}

func TestOutputs(t *testing.T) {
	s := synthApp(t).created
	for _, id := range []string{"BucketName", "TableName", "SecretArn", "QueueUrl", "DeadLetterQueueUrl", "DashboardUrl", "AlarmTopicArn"} {
		check(t, "output "+id, func() { s.template.HasOutput(jsii.String(id), obj{"Value": assertions.Match_AnyValue()}) })
	}
	url := asJSON(s.doc["Outputs"].(obj)["DashboardUrl"])
	if !strings.Contains(url, "#dashboards:name=") {
		t.Errorf("DashboardUrl = %s", url)
	}
}

// TestNotificationsHandlerHasItsOwnRoleAndLogs: CDK's bucket-notifications
// handler runs with a role of this stack without managed policies, allowed
// only to configure the one bucket, and logs to a group with retention.
func TestNotificationsHandlerHasItsOwnRoleAndLogs(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			var handler obj
			for id, fn := range s.resources("AWS::Lambda::Function") {
				if strings.HasPrefix(id, bucketNotificationsHandlerID) {
					handler = fn
				}
			}
			if handler == nil {
				t.Fatal("no bucket notifications handler")
			}
			props := handler["Properties"].(obj)
			roleID := roleOf(t, props)
			role := s.resources("AWS::IAM::Role")[roleID]["Properties"].(obj)
			if role["ManagedPolicyArns"] != nil {
				t.Errorf("handler role %s has managed policies: %v", roleID, role["ManagedPolicyArns"])
			}
			logGroup, _ := props["LoggingConfig"].(obj)["LogGroup"].(obj)["Ref"].(string)
			group, ok := s.resources("AWS::Logs::LogGroup")[logGroup]
			if !ok {
				t.Fatalf("handler logs to %v, not to a log group of this stack", props["LoggingConfig"])
			}
			if got := group["Properties"].(obj)["RetentionInDays"]; got != float64(s.cfg.LogRetentionDays) {
				t.Errorf("handler log retention %v, want %d", got, s.cfg.LogRetentionDays)
			}
			bucket := ":s3:::" + s.cfg.ExistingBucketName
			want := map[string]bool{"s3:PutBucketNotification": true, "logs:CreateLogStream": true, "logs:PutLogEvents": true}
			if s.cfg.ExistingBucketName != "" {
				want["s3:GetBucketNotification"] = true
			} else {
				bucketID, _ := s.onlyResource(t, "AWS::S3::Bucket", func(p obj) bool { return p["LoggingConfiguration"] != nil })
				bucket = getAtt(bucketID, "Arn")
			}
			got := s.grants(t, roleID)
			for action, resources := range got {
				if !want[action] {
					t.Errorf("handler may %s on %v", action, resources)
				}
				for _, r := range resources {
					if strings.HasPrefix(action, "s3:") && !strings.Contains(r, bucket) {
						t.Errorf("handler may %s on %s, want only the upload bucket", action, r)
					}
					if strings.HasPrefix(action, "logs:") && !strings.Contains(r, getAtt(logGroup, "Arn")) {
						t.Errorf("handler may %s on %s, want only its log group", action, r)
					}
				}
			}
			for action := range want {
				if _, ok := got[action]; !ok {
					t.Errorf("handler lacks %s", action)
				}
			}
			// The function waits for its role's grants.
			if deps := asJSON(handler["DependsOn"]); !strings.Contains(deps, roleID) {
				t.Errorf("handler DependsOn %s, want its role %s and its policy", deps, roleID)
			}
		})
	}
}

// TestRemoveOnDestroyLeavesNothingBehind: a disposable stack's buckets are
// emptied before deletion, and the auto-delete handler logs to a group of
// the stack (deleted with it) instead of a group it would leave behind.
func TestRemoveOnDestroyLeavesNothingBehind(t *testing.T) {
	a := synthApp(t)
	s := a.disposable
	buckets := s.resources("AWS::S3::Bucket")
	if len(buckets) != 2 {
		t.Fatalf("want the upload and access-log buckets, found %d", len(buckets))
	}
	for id, b := range buckets {
		if b["DeletionPolicy"] != "Delete" {
			t.Errorf("%s DeletionPolicy = %v", id, b["DeletionPolicy"])
		}
		check(t, id+" emptied on delete", func() {
			s.template.HasResourceProperties(jsii.String("Custom::S3AutoDeleteObjects"), obj{"BucketName": obj{"Ref": id}})
		})
	}
	var provider obj
	for id, fn := range s.resources("AWS::Lambda::Function") {
		if strings.HasPrefix(id, "CustomS3AutoDeleteObjects") {
			provider = fn
		}
	}
	if provider == nil {
		t.Fatal("no auto-delete handler")
	}
	logGroup, _ := provider["Properties"].(obj)["LoggingConfig"].(obj)["LogGroup"].(obj)["Ref"].(string)
	if group, ok := s.resources("AWS::Logs::LogGroup")[logGroup]; !ok || group["DeletionPolicy"] != "Delete" || group["Properties"].(obj)["RetentionInDays"] != float64(s.cfg.LogRetentionDays) {
		t.Errorf("auto-delete handler logs to %v, want a log group of the stack with retention, deleted with it", provider["Properties"].(obj)["LoggingConfig"])
	}
	// Retained or not, nothing is left that keeps costing: the alarm topic's
	// key (it encrypts nothing that outlives the topic) is scheduled for
	// deletion after KMS's shortest wait.
	for name, sc := range a.scenarios() {
		for id, key := range sc.resources("AWS::KMS::Key") {
			if key["DeletionPolicy"] != "Delete" || key["Properties"].(obj)["PendingWindowInDays"] != float64(7) {
				t.Errorf("%s: key %s DeletionPolicy %v, PendingWindowInDays %v: want Delete after 7 days", name, id, key["DeletionPolicy"], key["Properties"].(obj)["PendingWindowInDays"])
			}
		}
	}
	// Retained stacks keep their data: nothing empties their buckets.
	if n := len(a.created.resources("Custom::S3AutoDeleteObjects")); n != 0 {
		t.Errorf("created (retained) scenario empties %d buckets on delete", n)
	}
}

// TestDependsOnNamesResources: every DependsOn names a resource of the
// template (CDK drops dependencies on resources it does not render).
func TestDependsOnNamesResources(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		all := s.doc["Resources"].(obj)
		for id, r := range all {
			for _, dep := range asList(r.(obj)["DependsOn"]) {
				if dep == nil {
					continue
				}
				if _, ok := all[dep.(string)]; !ok {
					t.Errorf("%s: %s depends on missing %v", name, id, dep)
				}
			}
		}
	}
}

// TestOnlyManagedPolicyIsTheAutoDeleteHandlers backs docs/security.md's sentence
// on managed policies: the one AWS managed policy any stack attaches is
// AWSLambdaBasicExecutionRole, on the role of CDK's auto-delete-objects
// handler, which exists only when removeOnDestroy empties a bucket the
// stack created.
func TestOnlyManagedPolicyIsTheAutoDeleteHandlers(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			autoDelete := 0
			for id, role := range s.resources("AWS::IAM::Role") {
				managed, ok := role["Properties"].(obj)["ManagedPolicyArns"]
				if !ok {
					continue
				}
				if !strings.HasPrefix(id, "CustomS3AutoDeleteObjectsCustomResourceProviderRole") {
					t.Errorf("role %s has managed policies %s", id, asJSON(managed))
					continue
				}
				autoDelete++
				if list, _ := managed.([]any); len(list) != 1 || !strings.Contains(asJSON(list[0]), ":iam::aws:policy/service-role/AWSLambdaBasicExecutionRole") {
					t.Errorf("auto-delete handler role %s: managed policies %s, want AWSLambdaBasicExecutionRole only", id, asJSON(managed))
				}
			}
			want := 0
			if s.cfg.RemoveOnDestroy && s.cfg.ExistingBucketName == "" {
				want = 1
			}
			if autoDelete != want {
				t.Errorf("%d auto-delete handler roles with a managed policy, want %d (removeOnDestroy %v, existing bucket %q)",
					autoDelete, want, s.cfg.RemoveOnDestroy, s.cfg.ExistingBucketName)
			}
		})
	}
}
