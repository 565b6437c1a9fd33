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

package kubectlvideo

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"
)

// Machine-readable output (-o json|yaml), in kubectl get's habits: objects with apiVersion and
// kind, without managedFields, and several objects as a v1 List.

// checkStructured accepts the formats of -o; empty is the command's text.
func checkStructured(format string) error {
	switch format {
	case "", "json", "yaml":
		return nil
	}
	return fmt.Errorf("unknown output %q: use -o json or -o yaml (without -o: text for people)", format)
}

// printStructured writes v as indented JSON or as YAML.
func printStructured(w io.Writer, format string, v any) error {
	if err := checkStructured(format); err != nil {
		return err
	}
	var b []byte
	var err error
	if format == "yaml" {
		b, err = yaml.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, "", "    ")
		b = append(b, '\n')
	}
	if err != nil {
		return fmt.Errorf("printing %s: %w", format, err)
	}
	_, err = w.Write(b)
	return err
}

// printObjects writes one object as itself, or several (or none) as a List.
func printObjects(w io.Writer, format string, objs []client.Object, many bool) error {
	s, err := Scheme()
	if err != nil {
		return err
	}
	items := make([]any, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopyObject().(client.Object)
		// The typed client leaves apiVersion and kind empty; a manifest needs them.
		gvk, err := apiutil.GVKForObject(o, s)
		if err != nil {
			return fmt.Errorf("printing %s: %w", o.GetName(), err)
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		o.SetManagedFields(nil)
		items = append(items, o)
	}
	if len(items) == 1 && !many {
		return printStructured(w, format, items[0])
	}
	return printStructured(w, format, map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]any{"resourceVersion": ""},
		"items":      items,
	})
}
