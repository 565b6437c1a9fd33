/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// run stops at the first step that ends the reconcile; the steps after it do not run.
func TestRunStopsAtTheFirstStop(t *testing.T) {
	var ran []string
	step := func(name string, end *stop) stepFunc[*videov1alpha1.VideoRender] {
		return func(context.Context, *scope[*videov1alpha1.VideoRender]) *stop {
			ran = append(ran, name)
			return end
		}
	}
	boom := errors.New("boom")
	end := run(context.Background(), &scope[*videov1alpha1.VideoRender]{},
		step("a", nil), step("b", stopOn(boom)), step("c", stopHere()))
	if end == nil || !errors.Is(end.err, boom) {
		t.Errorf("run ended with %+v, want b's stop", end)
	}
	if strings.Join(ran, ",") != "a,b" {
		t.Errorf("ran %v, want a and b only", ran)
	}
	if end := run(context.Background(), &scope[*videov1alpha1.VideoRender]{}, step("d", nil)); end != nil {
		t.Errorf("steps that all go on ended with %+v", end)
	}
}

// packageFiles parses the package's own Go files (not its tests).
func packageFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	return files
}

// One way to say "stop here" (issue 29): a step returns *stop, alone. Only the controller-runtime
// boundary (Reconcile, and commit which turns a stop into its result) returns ctrl.Result with an
// error; no function returns a result beside a bool or a second value that says whether to stop.
func TestOneStopConvention(t *testing.T) {
	boundary := map[string]bool{"Reconcile": true, "commit": true}
	for name, f := range packageFiles(t) {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Type.Results == nil {
				continue
			}
			var types []string
			for _, r := range fn.Type.Results.List {
				n := max(len(r.Names), 1)
				for range n {
					types = append(types, exprString(r.Type))
				}
			}
			joined := strings.Join(types, ", ")
			switch {
			case strings.Contains(joined, "ctrl.Result") && len(types) > 1 && !boundary[fn.Name.Name]:
				t.Errorf("%s: %s returns (%s): a step ends the reconcile with *stop", name, fn.Name.Name, joined)
			case strings.Contains(joined, "*stop") && len(types) > 1:
				t.Errorf("%s: %s returns (%s): *stop stands alone", name, fn.Name.Name, joined)
			}
		}
	}
}

// The adapter holds what differs in behaviour between the kinds, and little else; the generic
// lifecycle never asks which kind it runs in (issue 29).
func TestNarrowAdapterAndNoKindChecks(t *testing.T) {
	files := packageFiles(t)
	var methods []string
	ast.Inspect(files["lifecycle.go"], func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "kindAdapter" {
			for _, m := range ts.Type.(*ast.InterfaceType).Methods.List {
				for _, id := range m.Names {
					methods = append(methods, id.Name)
				}
			}
		}
		return true
	})
	if len(methods) == 0 || len(methods) > 6 {
		t.Errorf("kindAdapter has %d methods %v, want at most 6", len(methods), methods)
	}
	// The files of one kind may name it; the generic ones may not.
	ownKind := map[string]bool{"videorender_controller.go": true, "videostoryboard_controller.go": true,
		"approval.go": true, "setup.go": true}
	for name, f := range files {
		if ownKind[name] {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.TypeAssertExpr:
				if x.Type != nil && strings.Contains(exprString(x.Type), "videov1alpha1.Video") {
					t.Errorf("%s: a type assertion to %s: a difference between kinds belongs to the adapter", name, exprString(x.Type))
				}
			case *ast.BasicLit:
				if x.Value == `"VideoRender"` || x.Value == `"VideoStoryboard"` {
					t.Errorf("%s: the kind %s named in generic code", name, x.Value)
				}
			}
			return true
		})
	}
}

// exprString renders a type expression as written (enough for the names checked here).
func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return "*" + exprString(x.X)
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.IndexExpr:
		return exprString(x.X) + "[" + exprString(x.Index) + "]"
	case *ast.ArrayType:
		return "[]" + exprString(x.Elt)
	case *ast.MapType:
		return "map[" + exprString(x.Key) + "]" + exprString(x.Value)
	case *ast.FuncType:
		return "func"
	case *ast.InterfaceType:
		return "interface{}"
	}
	return "?"
}
