package cfntemplate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// deployed gives every Ref and GetAtt a concrete value, as a deployed
// stack would.
type deployed struct{}

func (deployed) Ref(name string) (any, error) {
	switch name {
	case "AWS::Partition":
		return "aws", nil
	case "Missing":
		return nil, fmt.Errorf("no resource %q", name)
	}
	return "ref-" + name, nil
}

func (deployed) GetAtt(id, attr string) (any, error) { return id + "/" + attr, nil }

func value(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestResolveDeployed(t *testing.T) {
	r := NewResolver(deployed{})
	for _, c := range []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`3`, "3"},
		{`{"Ref": "Bucket"}`, "ref-Bucket"},
		{`{"Fn::GetAtt": ["Bucket", "Arn"]}`, "Bucket/Arn"},
		{`{"Fn::GetAtt": "Logs.Arn"}`, "Logs/Arn"},
		{`{"Fn::Join": ["", [{"Fn::GetAtt": ["B", "Arn"]}, "/in/*"]]}`, "B/Arn/in/*"},
		{`{"Fn::Join": [":", ["arn", {"Ref": "AWS::Partition"}, "s3"]]}`, "arn:aws:s3"},
		{`{"Fn::Sub": "${AWS::Partition}:${Queue.QueueName}"}`, "aws:Queue/QueueName"},
		{`{"Fn::Sub": ["${X}-${!Literal}", {"X": {"Ref": "Named"}}]}`, "ref-Named-${Literal}"},
		{`{"Fn::Select": [1, {"Fn::Split": ["/", "a/b/c"]}]}`, "b"},
		{`{"Fn::Select": ["0", ["x", "y"]]}`, "x"},
	} {
		got, resolved, err := r.String(value(t, c.in))
		if err != nil || got != c.want || !resolved {
			t.Errorf("String(%s) = %q, %v, %v; want %q, resolved", c.in, got, resolved, err, c.want)
		}
	}
	// Objects and lists are resolved throughout.
	got, err := r.Resolve(value(t, `{"A": [{"Ref": "X"}], "B": {"C": {"Fn::GetAtt": ["Y", "Arn"]}}}`))
	if err != nil || asJSON(got) != `{"A":["ref-X"],"B":{"C":"Y/Arn"}}` {
		t.Errorf("Resolve of an object = %s, %v", asJSON(got), err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"Ref": "Missing"}`, `no resource "Missing"`},
		{`{"Fn::If": ["c", "a", "b"]}`, "Fn::If is not supported"},
		{`{"Fn::Join": ["", "x"]}`, "Fn::Join of"},
		{`{"Fn::Join": ["", [["x"]]]}`, "part 0 is a list"},
		{`{"Fn::Select": [5, ["x"]]}`, "no such item"},
		{`{"Fn::Select": [0.5, ["x"]]}`, "not a whole number"},
		{`{"Fn::GetAtt": ["OnlyId"]}`, "want [logicalId, attribute]"},
		{`{"Fn::Sub": "${Missing}"}`, `no resource "Missing"`},
		{`{"Ref": 3}`, "want a logical id"},
		{`["a"]`, "is a list, not a string"},
	} {
		_, _, err := r.String(value(t, c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("String(%s) error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestResolveKeepingReferences(t *testing.T) {
	r := Keeping(map[string]string{"AWS::StackName": "Geo"})
	for _, c := range []struct {
		in, want string
		resolved bool
	}{
		{`{"Ref": "AWS::StackName"}`, "Geo", true},
		{`{"Ref": "Fn9CBB"}`, "Ref:Fn9CBB", false},
		{`{"Fn::GetAtt": ["Queue", "QueueName"]}`, "GetAtt:Queue.QueueName", false},
		{`{"Fn::Join": ["-", [{"Ref": "AWS::StackName"}, "x"]]}`, "Geo-x", true},
		{`{"Fn::Join": ["-", [{"Ref": "AWS::StackName"}, {"Ref": "T"}]]}`, "Geo-Ref:T", false},
		{`{"Fn::Sub": "${AWS::StackName}/${T.Arn}"}`, "Geo/GetAtt:T.Arn", false},
	} {
		got, resolved, err := r.String(value(t, c.in))
		if err != nil || got != c.want || resolved != c.resolved {
			t.Errorf("String(%s) = %q, %v, %v; want %q, %v", c.in, got, resolved, err, c.want, c.resolved)
		}
	}
	// Splitting an opaque form would split the reference's text.
	if _, _, err := r.String(value(t, `{"Fn::Select": [0, {"Fn::Split": [":", {"Ref": "T"}]}]}`)); err == nil || !strings.Contains(err.Error(), "known only once deployed") {
		t.Errorf("split of a reference: %v", err)
	}
	for s, want := range map[string]Reference{
		"Ref:Fn9CBB":             Ref("Fn9CBB"),
		"GetAtt:Queue.QueueName": GetAtt("Queue", "QueueName"),
	} {
		if got, ok := ParseReference(s); !ok || got != want || got.String() != s {
			t.Errorf("ParseReference(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"Ref:", "GetAtt:Queue", "GetAtt:.x", "plain"} {
		if _, ok := ParseReference(s); ok {
			t.Errorf("ParseReference(%q) accepted", s)
		}
	}
}

func TestOpaqueAndRefID(t *testing.T) {
	for in, want := range map[string]string{
		`"s"`: "s", `{"Ref": "A"}`: "Ref:A", `{"Fn::GetAtt": ["A", "Arn"]}`: "GetAtt:A.Arn",
		`30`: "30", `[1, 2]`: "[1,2]", `{"Fn::Join": ["", ["a", {"Ref": "B"}]]}`: "aRef:B",
	} {
		if got := Opaque(value(t, in)); got != want {
			t.Errorf("Opaque(%s) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`{"Ref": "A"}`: "A", `{"Fn::GetAtt": ["B", "StreamArn"]}`: "B", `{"Fn::GetAtt": "C.Arn"}`: "C", `"x"`: "", `{"Ref": "A", "x": 1}`: "",
	} {
		if got := RefID(value(t, in)); got != want {
			t.Errorf("RefID(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	tmpl, err := Parse([]byte(`{"Resources": {"B": {"Type": "AWS::SQS::Queue"}, "A": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": "60"}}, "F": {"Type": "AWS::Lambda::Function"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ids := tmpl.IDs("AWS::SQS::Queue"); strings.Join(ids, ",") != "A,B" {
		t.Errorf("IDs = %v", ids)
	}
	if _, ok := tmpl.Lookup("F", "AWS::SQS::Queue"); ok {
		t.Error("Lookup ignored the type")
	}
	a, _ := tmpl.Lookup("A", "AWS::SQS::Queue")
	if got := IntOr(a.Properties, "VisibilityTimeout", 30); got != 60 {
		t.Errorf("IntOr = %d", got)
	}
	if got := IntOr(a.Properties, "DelaySeconds", 7); got != 7 {
		t.Errorf("IntOr default = %d", got)
	}
	_, err = Parse([]byte(`{"Resources": {"A": {"Type": "X", "Properties": 3}, "B": {"Type": 4}}}`))
	if err == nil || !strings.Contains(err.Error(), "resource A") || !strings.Contains(err.Error(), "resource B") {
		t.Errorf("bad resources: %v", err)
	}
	for _, v := range []any{"0", 1.5, "x", nil} {
		if _, err := PositiveInt(v); err == nil {
			t.Errorf("PositiveInt(%v) accepted", v)
		}
	}
	if b, err := Bool("true"); !b || err != nil {
		t.Errorf("Bool(true) = %v, %v", b, err)
	}
}
