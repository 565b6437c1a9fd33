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

package testutil

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// FillEveryField sets every exported field reachable from ptr (a pointer to a struct) to a
// value derived from its JSON path and its position: strings to the path, numbers to the
// position (plus a quarter for floats), booleans to true, pointers to a new filled value, slices
// and maps to one filled element, JSON values to a small object naming the path. The digest
// golden tests build their fixture with it, so a field added to a request type is in the
// fixture at once and changes the pinned digest: the test fails and says why, instead of an
// upgrade finding out in a cluster.
//
// The fill must never change: the golden digests in internal/requestdigest and
// internal/previewdigest are pinned over its output. It fails on a kind it cannot fill
// (interface, chan, func), which a request type must not have.
func FillEveryField(ptr any) error {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("FillEveryField needs a non-nil pointer, got %T", ptr)
	}
	n := 0
	return fill(v.Elem(), "", &n)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func fill(v reflect.Value, path string, n *int) error {
	*n++
	// A JSON value (apiextensionsv1.JSON's Raw, json.RawMessage) must be valid JSON.
	if v.Type() == rawMessageType {
		v.SetBytes(jsonNaming(path))
		return nil
	}
	if v.Kind() == reflect.Struct && v.Type().Name() == "JSON" && v.NumField() == 1 && v.Field(0).Type() == reflect.TypeFor[[]byte]() {
		v.Field(0).SetBytes(jsonNaming(path))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n)) //nolint:gosec // a positive counter
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := fill(p.Elem(), path, n); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if err := fill(s.Index(0), path+"[0]", n); err != nil {
			return err
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		k := reflect.New(v.Type().Key()).Elem()
		if err := fill(k, path+".key", n); err != nil {
			return err
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := fill(e, path+".value", n); err != nil {
			return err
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			sub := name
			if path != "" {
				sub = path + "." + name
			}
			if f.Anonymous && f.Tag.Get("json") == "" {
				sub = path
			}
			if err := fill(v.Field(i), sub, n); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("cannot fill %s (%s) of kind %s", path, v.Type(), v.Kind())
	}
	return nil
}

func jsonNaming(path string) []byte {
	b, _ := json.Marshal(map[string]string{"path": path})
	return b
}

// UnsetFields lists the JSON paths of the exported fields under ptr that hold their zero value:
// empty when every field, at every depth, is set.
func UnsetFields(ptr any) []string {
	var out []string
	unset(reflect.ValueOf(ptr), "", &out)
	return out
}

func unset(v reflect.Value, path string, out *[]string) {
	if v.IsZero() {
		*out = append(*out, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		unset(v.Elem(), path, out)
	case reflect.Slice:
		if v.Type() == rawMessageType || v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			unset(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			unset(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k), out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			unset(v.Field(i), strings.TrimPrefix(path+"."+name, "."), out)
		}
	}
}
