// Command jsiiclose starts the jsii runtime, makes one call through it and
// closes it the way infra/main.go does (defer jsii.Close()), so a test can
// read what the runtime prints on the way out (TestJSIICloseIsSilent).
package main

import (
	"fmt"
	"os"

	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	root := constructs.NewRootConstruct(jsii.String("root"))
	constructs.NewConstruct(root, jsii.String("child"))
	fmt.Fprintln(os.Stdout, *root.Node().Path(), len(*root.Node().Children()))
}
