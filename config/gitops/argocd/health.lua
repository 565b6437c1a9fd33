-- Argo CD health check for VideoStoryboard and VideoRender (video.videoops.io), the same script
-- for both kinds. It reads the kstatus conditions the controllers write:
--   Healthy     Ready is True for the current spec: the preview or render completed;
--   Suspended   Stalled is True with reason BudgetExhausted: the namespace's VideoBudget is spent;
--               nothing failed, and the object submits by itself when the period resets (the
--               message gives the time) or the budget is raised; or a render waits for a person
--               to approve its preview (Ready False, reason AwaitingApproval), which may take
--               days: the Application is not Progressing, and not Degraded, meanwhile;
--   Degraded    Stalled is True otherwise: the job failed or only a human can unblock it (the
--               message says why, for example "JobFailed: ..." or "SecretNotFound: ...");
--   Progressing anything else: no status yet, a spec the controller has not seen yet
--               (observedGeneration below generation), or a job that is still running.
-- argocd-cm.yaml installs it; test/gitops/argocd_health_test.go tests it.
local hs = { status = "Progressing", message = "Waiting for the video-operator to report a status" }
if obj.status == nil then
  return hs
end

local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.message = "Waiting for the video-operator to act on generation " .. tostring(generation)
  return hs
end

local ready, stalled = nil, nil
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      ready = c
    elseif c.type == "Stalled" then
      stalled = c
    end
  end
end

local function describe(c)
  local text = c.reason or ""
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end

if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  if stalled.reason == "BudgetExhausted" then
    hs.status = "Suspended"
  end
  hs.message = describe(stalled)
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = describe(ready)
  return hs
end

if ready ~= nil then
  hs.message = describe(ready)
  if ready.reason == "AwaitingApproval" then
    hs.status = "Suspended"
    return hs
  end
end
if obj.status.progress ~= nil then
  hs.message = hs.message .. " (" .. tostring(obj.status.progress) .. "%)"
end
return hs
