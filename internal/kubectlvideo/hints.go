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

import "fmt"

// hint is a command the plugin suggests, always with -n: it is copied into another shell, a
// runbook or a ticket, where the current namespace of the kubeconfig is not the object's.
func hint(command string, t Target, namespace string) string {
	return fmt.Sprintf("kubectl video %s %s -n %s", command, t, namespace)
}
