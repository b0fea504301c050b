package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
)

// The policy check evaluates a synthesized template as it would be deployed
// into this fake account and region: every CloudFormation intrinsic in the
// policies is resolved to the concrete value CloudFormation would give it.
const (
	fakeAccount   = "111122223333"
	fakeRegion    = "us-east-1"
	fakePartition = "aws"
	// otherAccount stands for somebody else's account in confused-deputy checks.
	otherAccount = "444455556666"
)

// cfnResolver gives Ref and Fn::GetAtt the values CloudFormation would
// give them in the fake account (the intrinsic functions around them are
// resolved by pkg/local/cfntemplate, as for every local template reader).
// Resources without an explicit physical name get the name CloudFormation
// would generate, made deterministic: <stack>-<logical id>-<hash>.
type cfnResolver struct {
	stackName  string
	resources  map[string]map[string]any
	intrinsics *cfntemplate.Resolver
}

func newCFNResolver(stackName string, doc map[string]any) *cfnResolver {
	r := &cfnResolver{stackName: stackName, resources: map[string]map[string]any{}}
	all, _ := doc["Resources"].(map[string]any)
	for id, res := range all {
		if m, ok := res.(map[string]any); ok {
			r.resources[id] = m
		}
	}
	r.intrinsics = cfntemplate.NewResolver(r)
	return r
}

// resolve returns v with every intrinsic replaced by its value.
func (r *cfnResolver) resolve(v any) (any, error) { return r.intrinsics.Resolve(v) }

// resolveString resolves v and requires a string.
func (r *cfnResolver) resolveString(v any) (string, error) {
	s, _, err := r.intrinsics.String(v)
	return s, err
}

// physicalName is a resource's name: its explicit name property if set,
// else the deterministic stand-in for CloudFormation's generated name.
func (r *cfnResolver) physicalName(id string) (string, error) {
	res, ok := r.resources[id]
	if !ok {
		return "", fmt.Errorf("no resource %q in the template", id)
	}
	typ, _ := res["Type"].(string)
	props, _ := res["Properties"].(map[string]any)
	prop := map[string]string{
		"AWS::S3::Bucket":             "BucketName",
		"AWS::SQS::Queue":             "QueueName",
		"AWS::SNS::Topic":             "TopicName",
		"AWS::DynamoDB::Table":        "TableName",
		"AWS::Lambda::Function":       "FunctionName",
		"AWS::IAM::Role":              "RoleName",
		"AWS::Logs::LogGroup":         "LogGroupName",
		"AWS::CloudWatch::Alarm":      "AlarmName",
		"AWS::Events::Rule":           "Name",
		"AWS::SecretsManager::Secret": "Name",
		"AWS::Pipes::Pipe":            "Name",
	}[typ]
	if prop != "" && props[prop] != nil {
		return r.resolveString(props[prop])
	}
	sum := sha256.Sum256([]byte(r.stackName + "/" + id))
	name := fmt.Sprintf("%s-%s-%s", r.stackName, id, strings.ToUpper(hex.EncodeToString(sum[:])[:12]))
	switch typ {
	case "AWS::S3::Bucket":
		name = strings.ToLower(name)
		if len(name) > 63 {
			name = name[:63]
		}
	case "AWS::IAM::Role", "AWS::Lambda::Function", "AWS::Events::Rule", "AWS::Pipes::Pipe":
		if len(name) > 64 {
			name = name[:64]
		}
	case "AWS::SQS::Queue", "AWS::SNS::Topic":
		if len(name) > 80 {
			name = name[:80]
		}
	}
	return name, nil
}

// streamLabel stands for the creation time DynamoDB puts in a stream's ARN.
const streamLabel = "2026-03-02T00:00:00.000"

// secretSuffix stands for the six random characters Secrets Manager
// appends to a secret's name in its ARN.
const secretSuffix = "-Ab12Cd"

func (r *cfnResolver) pseudo(name string) (string, bool) {
	switch name {
	case "AWS::AccountId":
		return fakeAccount, true
	case "AWS::Region":
		return fakeRegion, true
	case "AWS::Partition":
		return fakePartition, true
	case "AWS::URLSuffix":
		return "amazonaws.com", true
	case "AWS::StackName":
		return r.stackName, true
	case "AWS::StackId":
		return fmt.Sprintf("arn:%s:cloudformation:%s:%s:stack/%s/00000000-0000-0000-0000-000000000000", fakePartition, fakeRegion, fakeAccount, r.stackName), true
	}
	return "", false
}

// Ref returns what Ref gives for a pseudo parameter or a resource.
func (r *cfnResolver) Ref(id string) (any, error) {
	if v, ok := r.pseudo(id); ok {
		return v, nil
	}
	res, ok := r.resources[id]
	if !ok {
		return nil, fmt.Errorf("Ref to %q, which is neither a resource nor a pseudo parameter (parameters are not supported)", id)
	}
	typ, _ := res["Type"].(string)
	switch typ {
	case "AWS::SQS::Queue":
		return r.GetAtt(id, "QueueUrl")
	case "AWS::SNS::Topic":
		return r.GetAtt(id, "TopicArn")
	case "AWS::KMS::Key":
		return r.GetAtt(id, "KeyId")
	case "AWS::SecretsManager::Secret":
		return r.GetAtt(id, "Id")
	case "AWS::S3::Bucket", "AWS::DynamoDB::Table", "AWS::Lambda::Function", "AWS::IAM::Role",
		"AWS::Logs::LogGroup", "AWS::CloudWatch::Alarm", "AWS::Events::Rule", "AWS::Pipes::Pipe":
		return r.physicalName(id)
	}
	return nil, fmt.Errorf("the policy check does not know what Ref gives for %s (%s)", id, typ)
}

// GetAtt returns the attributes the policies of this stack use, in the
// formats CloudFormation documents for each resource type.
func (r *cfnResolver) GetAtt(id, attr string) (any, error) {
	res, ok := r.resources[id]
	if !ok {
		return nil, fmt.Errorf("Fn::GetAtt of %q, which is not a resource", id)
	}
	typ, _ := res["Type"].(string)
	name, err := r.physicalName(id)
	if err != nil {
		return nil, err
	}
	arn := func(service, resource string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", fakePartition, service, fakeRegion, fakeAccount, resource)
	}
	switch typ + "." + attr {
	case "AWS::S3::Bucket.Arn":
		return "arn:" + fakePartition + ":s3:::" + name, nil
	case "AWS::SQS::Queue.Arn":
		return arn("sqs", name), nil
	case "AWS::SQS::Queue.QueueName":
		return name, nil
	case "AWS::SQS::Queue.QueueUrl":
		return fmt.Sprintf("https://sqs.%s.amazonaws.com/%s/%s", fakeRegion, fakeAccount, name), nil
	case "AWS::SNS::Topic.TopicArn":
		return arn("sns", name), nil
	case "AWS::SNS::Topic.TopicName":
		return name, nil
	case "AWS::KMS::Key.KeyId":
		return r.keyID(id), nil
	case "AWS::KMS::Key.Arn":
		return arn("kms", "key/"+r.keyID(id)), nil
	case "AWS::DynamoDB::Table.Arn":
		return arn("dynamodb", "table/"+name), nil
	case "AWS::DynamoDB::Table.StreamArn":
		return arn("dynamodb", "table/"+name+"/stream/"+streamLabel), nil
	case "AWS::Pipes::Pipe.Arn":
		return arn("pipes", "pipe/"+name), nil
	case "AWS::Lambda::Function.Arn":
		return arn("lambda", "function:"+name), nil
	case "AWS::SecretsManager::Secret.Id":
		return arn("secretsmanager", "secret:"+name+secretSuffix), nil
	case "AWS::IAM::Role.Arn":
		return fmt.Sprintf("arn:%s:iam::%s:role/%s", fakePartition, fakeAccount, name), nil
	case "AWS::Logs::LogGroup.Arn":
		// CloudFormation's Arn of a log group ends in ":*", covering its streams.
		return arn("logs", "log-group:"+name+":*"), nil
	case "AWS::CloudWatch::Alarm.Arn":
		return arn("cloudwatch", "alarm:"+name), nil
	case "AWS::Events::Rule.Arn":
		return arn("events", "rule/"+name), nil
	}
	return nil, fmt.Errorf("the policy check does not know Fn::GetAtt %s.%s (%s)", id, attr, typ)
}

// keyID is a stable stand-in for a KMS key's generated id (a UUID).
func (r *cfnResolver) keyID(id string) string {
	sum := sha256.Sum256([]byte(r.stackName + "/" + id))
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func TestPolicyResolver(t *testing.T) {
	doc := map[string]any{"Resources": map[string]any{
		"Bucket": obj{"Type": "AWS::S3::Bucket"},
		"Named":  obj{"Type": "AWS::S3::Bucket", "Properties": obj{"BucketName": "my-bucket"}},
		"Queue":  obj{"Type": "AWS::SQS::Queue"},
		"Logs":   obj{"Type": "AWS::Logs::LogGroup", "Properties": obj{"LogGroupName": obj{"Fn::Sub": "/app/${AWS::StackName}"}}},
		"Secret": obj{"Type": "AWS::SecretsManager::Secret", "Properties": obj{"Name": "geo/key"}},
		"Key":    obj{"Type": "AWS::KMS::Key"},
	}}
	r := newCFNResolver("Geo", doc)
	for _, c := range []struct {
		in   any
		want string
	}{
		{obj{"Fn::GetAtt": []any{"Named", "Arn"}}, "arn:aws:s3:::my-bucket"},
		{obj{"Fn::Join": []any{"", []any{obj{"Fn::GetAtt": []any{"Named", "Arn"}}, "/in/*"}}}, "arn:aws:s3:::my-bucket/in/*"},
		{obj{"Fn::Join": []any{"", []any{"arn:", obj{"Ref": "AWS::Partition"}, ":s3:::x"}}}, "arn:aws:s3:::x"},
		{obj{"Fn::Sub": "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${Queue.QueueName}"}, asString(r.GetAtt("Queue", "Arn"))},
		{obj{"Fn::Sub": []any{"${X}-${!Literal}", obj{"X": obj{"Ref": "Named"}}}}, "my-bucket-${Literal}"},
		{obj{"Fn::GetAtt": "Logs.Arn"}, "arn:aws:logs:us-east-1:111122223333:log-group:/app/Geo:*"},
		{obj{"Ref": "Secret"}, "arn:aws:secretsmanager:us-east-1:111122223333:secret:geo/key" + secretSuffix},
		{obj{"Fn::Select": []any{1.0, obj{"Fn::Split": []any{"/", "a/b/c"}}}}, "b"},
		{obj{"Ref": "Queue"}, "https://sqs.us-east-1.amazonaws.com/111122223333/" + asString(r.GetAtt("Queue", "QueueName"))},
	} {
		got, err := r.resolveString(c.in)
		if err != nil || got != c.want {
			t.Errorf("resolve %s = %q, %v; want %q", asJSON(c.in), got, err, c.want)
		}
	}
	if name, _ := r.physicalName("Bucket"); name != strings.ToLower(name) || !strings.HasPrefix(name, "geo-bucket-") {
		t.Errorf("generated bucket name %q is not a lowercase <stack>-<id>-<hash>", name)
	}
	if k, _ := r.resolveString(obj{"Fn::GetAtt": []any{"Key", "Arn"}}); !regexp.MustCompile(`^arn:aws:kms:us-east-1:111122223333:key/[0-9a-f-]{36}$`).MatchString(k) {
		t.Errorf("key ARN %q", k)
	}
	for _, bad := range []any{obj{"Ref": "Missing"}, obj{"Fn::If": []any{"c", "a", "b"}}, obj{"Fn::GetAtt": []any{"Bucket", "WebsiteURL"}}} {
		if _, err := r.resolve(bad); err == nil {
			t.Errorf("resolve %s: want an error", asJSON(bad))
		}
	}
}

func asString(v any, _ error) string { s, _ := v.(string); return s }
