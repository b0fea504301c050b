package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
)

// Before cdk deploy (geolocate doctor --predeploy, which make deploy runs
// first), what CloudFormation would only find out halfway through a
// deployment and roll back for: an existing bucket in another region, an
// existing notification S3 refuses to overlap, a concurrency the account
// cannot give. The settings are read as the CDK app reads them: cdk.json's
// context, then each -c key=value.

// The read-only AWS APIs the pre-deploy checks and the notification check
// use besides doctor's others.
type (
	bucketLocationAPI interface {
		GetBucketLocation(ctx context.Context, in *s3.GetBucketLocationInput, optFns ...func(*s3.Options)) (*s3.GetBucketLocationOutput, error)
	}
	ruleTargetAPI interface {
		ListRuleNamesByTarget(ctx context.Context, in *eventbridge.ListRuleNamesByTargetInput, optFns ...func(*eventbridge.Options)) (*eventbridge.ListRuleNamesByTargetOutput, error)
	}
	accountAPI interface {
		GetAccountSettings(ctx context.Context, in *lambda.GetAccountSettingsInput, optFns ...func(*lambda.Options)) (*lambda.GetAccountSettingsOutput, error)
	}
)

var predeployChecks = []doctorCheck{
	{"bucket-region", "bucket region", (*doctor).checkBucketRegion},
	{"notification-overlap", "notification overlap", (*doctor).checkNotificationOverlap},
	{"account-concurrency", "account concurrency", (*doctor).checkAccountConcurrency},
}

// deployPlan is what the pre-deploy checks need of the configuration.
type deployPlan struct {
	stackName      string
	existingBucket string
	prefix, suffix string
	notifications  string
	maxConcurrency int
}

// contextFlags collects repeated -c key=value, as cdk takes them.
type contextFlags map[string]string

func (c contextFlags) String() string { return "" }

func (c contextFlags) Set(v string) error {
	key, value, ok := strings.Cut(v, "=")
	if !ok || key == "" {
		return fmt.Errorf("%q: want key=value", v)
	}
	c[key] = value
	return nil
}

// readDeployPlan reads cdk.json's context at path, overridden by overrides.
func readDeployPlan(path string, overrides contextFlags) (*deployPlan, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the CDK settings: %w", err)
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	get := func(key string) string {
		if v, ok := overrides[key]; ok {
			return strings.TrimSpace(v)
		}
		switch v := doc.Context[key].(type) {
		case nil:
			return ""
		case string:
			return strings.TrimSpace(v)
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		default:
			return fmt.Sprint(v)
		}
	}
	p := &deployPlan{
		stackName:      get("stackName"),
		existingBucket: get("existingBucketName"),
		prefix:         get("uploadPrefix"),
		suffix:         get("uploadSuffix"),
	}
	mode, ok := configrules.Notifications(strings.ToLower(get("notifications")), p.existingBucket != "")
	if !ok {
		return nil, fmt.Errorf("notifications %q: want s3 or eventbridge (cdk synth says the same)", get("notifications"))
	}
	p.notifications = mode
	if p.maxConcurrency, err = strconv.Atoi(get("maxConcurrency")); err != nil {
		return nil, fmt.Errorf("maxConcurrency %q: want a whole number", get("maxConcurrency"))
	}
	if p.stackName == "" {
		return nil, errors.New("stackName is empty")
	}
	return p, nil
}

// bucketRegion is the region a bucket is in: GetBucketLocation's
// constraint, empty for us-east-1 and "EU" for eu-west-1 (its legacy name).
func (d *doctor) bucketRegion(ctx context.Context, bucket string) (string, error) {
	if d.clients.locations == nil {
		return "", errors.New("no S3 client")
	}
	out, err := d.clients.locations.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return "", fmt.Errorf("location of bucket %s: %w", bucket, err)
	}
	switch c := string(out.LocationConstraint); c {
	case "":
		return "us-east-1", nil
	case "EU":
		return "eu-west-1", nil
	default:
		return c, nil
	}
}

// uploadBucket is the bucket the checks look at: the planned existing one
// before a deploy ("" when the stack creates its own), else the stack's.
func (d *doctor) uploadBucket(ctx context.Context) (string, error) {
	if d.plan != nil {
		return d.plan.existingBucket, nil
	}
	return d.loc.output(ctx, d.clients, outputBucketName)
}

// checkBucketRegion: the bucket is in the stack's region. S3 delivers
// notifications, and EventBridge events, only in the bucket's own region:
// a queue or rule in another one never hears of an upload, and S3 refuses
// the notification configuration.
func (d *doctor) checkBucketRegion(ctx context.Context) checkResult {
	bucket, err := d.uploadBucket(ctx)
	switch {
	case err != nil:
		return d.couldNotCheck(err)
	case bucket == "":
		return pass("the stack creates its own bucket, in its region")
	case d.clients.region == "":
		return d.couldNotCheck(errors.New("the deployment's region is not set (AWS_REGION or the profile's region)"))
	}
	region, err := d.bucketRegion(ctx, bucket)
	if err != nil {
		return d.couldNotCheck(err)
	}
	if region != d.clients.region {
		return fail(fmt.Sprintf("bucket %s is in %s, the stack in %s: S3 sends its events only within %s", bucket, region, d.clients.region, region),
			"deploy the stack to "+region+" (AWS_REGION="+region+" or --profile of that region)")
	}
	return pass(fmt.Sprintf("bucket %s is in %s, the stack's region", bucket, region))
}

// checkNotificationOverlap: in s3 mode, no notification of the existing
// bucket overlaps the stack's (S3 refuses two configurations whose event
// types overlap and whose prefixes and suffixes both overlap).
func (d *doctor) checkNotificationOverlap(ctx context.Context) checkResult {
	p := d.plan
	if p.existingBucket == "" {
		return pass("the stack creates its own bucket: no other notification to overlap")
	}
	if p.notifications == configrules.NotificationsEventBridge {
		return pass(fmt.Sprintf("notifications=eventbridge: bucket %s sends its events to EventBridge, which overlaps no notification configuration", p.existingBucket))
	}
	if d.clients.notifications == nil {
		return d.couldNotCheck(errors.New("no S3 client"))
	}
	out, err := d.clients.notifications.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(p.existingBucket)})
	if err != nil {
		return d.couldNotCheck(fmt.Errorf("notification configuration of bucket %s: %w", p.existingBucket, err))
	}
	// S3 compares the values the configurations hold, and the stack's are
	// URL-encoded (s3keyfilter): "Photos 2024/" is "Photos+2024/" there.
	prefix, suffix := s3keyfilter.Encode(p.prefix), s3keyfilter.Encode(p.suffix)
	var overlapping []string
	consider := func(kind, id, target string, events []s3types.Event, filter *s3types.NotificationConfigurationFilter) {
		// The stack's own configuration, from an earlier deploy, is replaced.
		if strings.Contains(id, ":stack/"+p.stackName+"/") {
			return
		}
		theirPrefix, theirSuffix := filterRules(filter)
		if eventsOverlap(events) && overlaps(theirPrefix, prefix, strings.HasPrefix) && overlaps(theirSuffix, suffix, strings.HasSuffix) {
			overlapping = append(overlapping, fmt.Sprintf("%s %s (prefix %q, suffix %q)", kind, target, theirPrefix, theirSuffix))
		}
	}
	for _, c := range out.QueueConfigurations {
		consider("queue", aws.ToString(c.Id), aws.ToString(c.QueueArn), c.Events, c.Filter)
	}
	for _, c := range out.TopicConfigurations {
		consider("topic", aws.ToString(c.Id), aws.ToString(c.TopicArn), c.Events, c.Filter)
	}
	for _, c := range out.LambdaFunctionConfigurations {
		consider("function", aws.ToString(c.Id), aws.ToString(c.LambdaFunctionArn), c.Events, c.Filter)
	}
	if len(overlapping) > 0 {
		return fail(fmt.Sprintf("bucket %s already notifies %s of new objects overlapping prefix %q and suffix %q (as S3 holds them, URL-encoded): S3 refuses the stack's notification and the deploy fails",
			p.existingBucket, strings.Join(overlapping, "; "), prefix, suffix),
			"deploy with -c notifications=eventbridge (the default for an existing bucket: it overlaps nothing), or with an uploadPrefix/uploadSuffix no existing notification covers")
	}
	return pass(fmt.Sprintf("no notification of bucket %s overlaps prefix %q and suffix %q (as S3 holds them, URL-encoded)", p.existingBucket, prefix, suffix))
}

// filterRules reads a notification's key filter.
func filterRules(f *s3types.NotificationConfigurationFilter) (prefix, suffix string) {
	if f == nil || f.Key == nil {
		return "", ""
	}
	for _, r := range f.Key.FilterRules {
		switch strings.ToLower(string(r.Name)) {
		case "prefix":
			prefix = aws.ToString(r.Value)
		case "suffix":
			suffix = aws.ToString(r.Value)
		}
	}
	return prefix, suffix
}

// eventsOverlap reports whether events include a kind of ObjectCreated.
func eventsOverlap(events []s3types.Event) bool {
	for _, e := range events {
		if strings.HasPrefix(string(e), "s3:ObjectCreated:") {
			return true
		}
	}
	return false
}

// overlaps is S3's overlap of two prefixes (has = HasPrefix) or suffixes
// (HasSuffix): one covers the other, an empty one covering everything.
func overlaps(a, b string, has func(s, part string) bool) bool {
	return has(a, b) || has(b, a)
}

// checkAccountConcurrency: maxConcurrency leaves the account's other
// functions their share of its concurrency quota (configrules).
func (d *doctor) checkAccountConcurrency(ctx context.Context) checkResult {
	if d.clients.account == nil {
		return d.couldNotCheck(errors.New("no Lambda client"))
	}
	out, err := d.clients.account.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{})
	if err != nil {
		return d.couldNotCheck(fmt.Errorf("reading the Lambda account settings: %w", err))
	}
	if out.AccountLimit == nil {
		return d.couldNotCheck(errors.New("the Lambda account settings carry no account limit"))
	}
	quota := int(out.AccountLimit.ConcurrentExecutions)
	limit := configrules.MaxConcurrencyFor(quota)
	if d.plan.maxConcurrency > limit {
		return fail(fmt.Sprintf("maxConcurrency %d is above the %d this account's quota of %d concurrent executions leaves one function",
			d.plan.maxConcurrency, limit, quota),
			fmt.Sprintf("deploy with -c maxConcurrency=%d, or ask for a higher Lambda concurrency quota (Service Quotas) and set -c accountConcurrencyLimit to it", limit))
	}
	return pass(fmt.Sprintf("maxConcurrency %d within the %d the account's quota of %d leaves one function", d.plan.maxConcurrency, limit, quota))
}

// uploadRuleOfQueue is the name of an EventBridge rule that targets the
// queue, "" when none does.
func (d *doctor) uploadRuleOfQueue(ctx context.Context, queueArn string) (string, error) {
	if d.clients.rules == nil {
		return "", errors.New("no EventBridge client")
	}
	out, err := d.clients.rules.ListRuleNamesByTarget(ctx, &eventbridge.ListRuleNamesByTargetInput{TargetArn: aws.String(queueArn)})
	if err != nil {
		return "", fmt.Errorf("EventBridge rules targeting %s: %w", queueArn, err)
	}
	if len(out.RuleNames) == 0 {
		return "", nil
	}
	return out.RuleNames[0], nil
}
