package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/local/eventpattern"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
)

// keyFilterCases are upload prefixes and suffixes with each kind of
// character S3's filter rule treats specially, the encoded form the bucket
// notification must hold, and a key under them.
var keyFilterCases = []struct {
	name, prefix, suffix string
	encPrefix, encSuffix string
	key                  string
}{
	{"space", "Photos 2024/", ".jpg", "Photos+2024/", ".jpg", "Photos 2024/harbour at dusk.jpg"},
	{"plus", "a+b/", "", "a%2Bb/", "", "a+b/x.jpg"},
	{"percent", "100%/", "", "100%25/", "", "100%/x.jpg"},
	{"ampersand", "", "&co.jpg", "", "%26co.jpg", "shots/me&co.jpg"},
	{"non-ASCII", "été/", ".jpeg", "%C3%A9t%C3%A9/", ".jpeg", "été/plage.jpeg"},
	{"plain", "photos/", ".jpg", "photos/", ".jpg", "photos/a.jpg"},
}

// synthKeyFilterStacks synthesizes, for each case and notification mode,
// the upload subscription alone (an imported bucket and two queues): the
// whole stack is not needed to see the filters, and is slow to synthesize.
func synthKeyFilterStacks(t *testing.T) map[string]map[string]any {
	t.Helper()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	stacks := map[string]awscdk.Stack{}
	for i, tc := range keyFilterCases {
		for _, mode := range []string{notificationsS3, notificationsEventBridge} {
			stack := awscdk.NewStack(app, jsii.String(fmt.Sprintf("KeyFilter%d%s", i, mode)), &awscdk.StackProps{
				Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("eu-west-1")},
			})
			bucket := awss3.Bucket_FromBucketName(stack, jsii.String("Uploads"), jsii.String("smoke-uploads"))
			queue := awssqs.NewQueue(stack, jsii.String("Queue"), nil)
			dlq := awssqs.NewQueue(stack, jsii.String("DeadLetters"), nil)
			subscribeQueueToUploads(stack, bucket, queue, dlq, Config{Notifications: mode, UploadPrefix: tc.prefix, UploadSuffix: tc.suffix})
			stacks[tc.name+"/"+mode] = stack
		}
	}
	docs := map[string]map[string]any{}
	for name, stack := range stacks {
		raw, err := json.Marshal(assertions.Template_FromStack(stack, nil).ToJSON())
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		docs[name] = doc
	}
	return docs
}

// onlyOfType is the properties of the template's one resource of typ.
func onlyOfType(t *testing.T, doc map[string]any, typ string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, r := range doc["Resources"].(map[string]any) {
		if res := r.(map[string]any); res["Type"] == typ {
			found = append(found, res["Properties"].(map[string]any))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d resources of type %s, want 1", len(found), typ)
	}
	return found[0]
}

// In s3 mode the bucket's notification holds the URL-encoded prefix and
// suffix, as S3 requires; the IAM grant is on the raw prefix (TestGrants
// in iam_test.go). In eventbridge mode the upload rule matches a key under
// both readings, raw and encoded, and nothing outside them.
func TestUploadKeyFiltersUnderS3Rules(t *testing.T) {
	docs := synthKeyFilterStacks(t)
	for _, tc := range keyFilterCases {
		t.Run(tc.name, func(t *testing.T) {
			props := onlyOfType(t, docs[tc.name+"/"+notificationsS3], "Custom::S3BucketNotifications")
			rules := map[string]string{}
			for _, q := range props["NotificationConfiguration"].(map[string]any)["QueueConfigurations"].([]any) {
				for _, r := range q.(map[string]any)["Filter"].(map[string]any)["Key"].(map[string]any)["FilterRules"].([]any) {
					rule := r.(map[string]any)
					rules[rule["Name"].(string)] = rule["Value"].(string)
				}
			}
			if rules["prefix"] != tc.encPrefix || rules["suffix"] != tc.encSuffix {
				t.Errorf("notification filter prefix %q suffix %q, want %q and %q", rules["prefix"], rules["suffix"], tc.encPrefix, tc.encSuffix)
			}

			rule := onlyOfType(t, docs[tc.name+"/"+notificationsEventBridge], "AWS::Events::Rule")
			raw, err := json.Marshal(rule["EventPattern"])
			if err != nil {
				t.Fatal(err)
			}
			pattern, err := eventpattern.Compile(raw)
			if err != nil {
				t.Fatalf("the upload rule's pattern %s: %v", raw, err)
			}
			event := func(key string) []byte {
				return fmt.Appendf(nil, `{"source":"aws.s3","detail-type":"Object Created","detail":{"bucket":{"name":"smoke-uploads"},"object":{"key":%q}}}`, key)
			}
			for _, key := range []string{tc.key, s3keyfilter.Encode(tc.key)} {
				if ok, err := pattern.MatchJSON(event(key)); err != nil || !ok {
					t.Errorf("the upload rule %s does not match key %q (%v)", raw, key, err)
				}
			}
			if ok, _ := pattern.MatchJSON(event("elsewhere/" + tc.key + ".txt")); ok {
				t.Errorf("the upload rule %s matches a key outside the prefix and suffix", raw)
			}
			// One matcher per distinct reading.
			keyMatchers := rule["EventPattern"].(map[string]any)["detail"].(map[string]any)["object"].(map[string]any)["key"].([]any)
			want := 2
			if tc.encPrefix == tc.prefix && tc.encSuffix == tc.suffix {
				want = 1
			}
			if len(keyMatchers) != want {
				t.Errorf("the upload rule's key has %d matchers %v, want %d", len(keyMatchers), keyMatchers, want)
			}
		})
	}
}
