package alarmeval

// ResolveString turns a template value into a string the way the alarms'
// names and dimensions are read, for other resources of the same template
// (a dashboard's body): a plain string as it is, Ref replaced from refs when
// it names one (pseudo parameters such as AWS::StackName and AWS::Region, or
// template parameters), other Refs and Fn::GetAtt kept as opaque references
// (see ParseReference), Fn::Join joined. resolved is false when any part
// stayed opaque.
func ResolveString(v any, refs map[string]string) (s string, resolved bool, err error) {
	return resolveString(v, refs)
}
