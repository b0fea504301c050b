package envvars

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestOneConstantPerVariable: each variable has one name here, so it is
// read in one place. AWS_LAMBDA_FUNCTION_MEMORY_SIZE had two
// (FunctionMemorySize and LambdaMemorySize), read by two parsers with two
// defaults; this test would have caught it.
func TestOneConstantPerVariable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "envvars.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // value -> constant
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, value := range vs.Values {
				lit, ok := value.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				if other, dup := names[v]; dup {
					t.Errorf("%s and %s both name %s", other, vs.Names[i].Name, v)
				}
				names[v] = vs.Names[i].Name
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %d constants in envvars.go: the test no longer reads them", len(names))
	}
}
