-- Argo CD health check for thermocline.io/ThermoclineCluster.
-- Install: argocd-cm key resource.customizations.health.thermocline.io_ThermoclineCluster (see argocd-cm.yaml).
local hs = {}

local function condition(conditions, type)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local function describe(c)
  local text = c.type .. " " .. (c.reason or "")
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end

if obj.spec ~= nil and obj.spec.paused == true then
  hs.status = "Suspended"
  hs.message = "spec.paused is true: proxy and feeder scaled to 0, evictor and warmer suspended"
  return hs
end

if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report status"
  return hs
end

local conditions = obj.status.conditions
if obj.metadata ~= nil and obj.metadata.generation ~= nil and
    (obj.status.observedGeneration == nil or obj.status.observedGeneration < obj.metadata.generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return hs
end

-- a restore of the archive (spec.restore) holds the fleet until its resync: progressing, and degraded when a step failed
local restoring = condition(conditions, "Restoring")
if restoring ~= nil and restoring.status == "True" then
  if restoring.reason == "RestoreFailed" then
    hs.status = "Degraded"
  else
    hs.status = "Progressing"
  end
  hs.message = describe(restoring)
  return hs
end

-- the mode conditions do not change Ready: a refused mode request is degraded, a transition is progressing
-- (Restoring: a restore run with the CLI holds the fleet)
local mode = condition(conditions, "ModeActive")
local modeReason = mode ~= nil and mode.status == "False" and mode.reason or nil
if modeReason == "CutoverRefused" or modeReason == "ModeRefused" then
  hs.status = "Degraded"
  hs.message = describe(mode)
  return hs
end
local switching = modeReason == "CuttingOver" or modeReason == "Draining" or modeReason == "Switching" or
    modeReason == "Restoring"

-- the archive follower (shadowing, cutting over): stopped or behind holds a cutover back, a resync is under way;
-- once drained the archive alone is current and the follower matters only for a way back to tiered
local follower = condition(conditions, "FollowerHealthy")
local drainedNow = condition(conditions, "Drained")
if follower ~= nil and follower.status == "False" and not (drainedNow ~= nil and drainedNow.status == "True") then
  if follower.reason == "FollowerResyncing" then
    hs.status = "Progressing"
  else
    hs.status = "Degraded"
  end
  hs.message = describe(follower)
  return hs
end

local ready = condition(conditions, "Ready")
if ready ~= nil and ready.status == "True" and not switching then
  local drained = condition(conditions, "Drained")
  hs.status = "Healthy"
  if drained ~= nil and drained.status == "True" and drained.message ~= nil then
    hs.message = drained.message
  else
    hs.message = ready.message or "Ready"
  end
  return hs
end

for _, type in ipairs({"ArchiveReachable", "VersionCompatible", "ResourcesApplied"}) do
  local c = condition(conditions, type)
  if c ~= nil and c.status == "False" then
    hs.status = "Degraded"
    hs.message = describe(c)
    return hs
  end
end

-- a reconcile that keeps failing is degraded, whatever phase the last good reconcile wrote
if ready ~= nil and (ready.reason == "InvalidSpec" or ready.reason == "ReconcileError" or
    obj.status.phase == "Failed" or obj.status.phase == "Degraded") then
  hs.status = "Degraded"
  hs.message = describe(ready)
  return hs
end

if switching then
  hs.status = "Progressing"
  hs.message = describe(mode)
  return hs
end

if ready ~= nil and ready.reason == "Paused" then
  hs.status = "Suspended"
  hs.message = describe(ready)
  return hs
end

hs.status = "Progressing"
if ready ~= nil then
  hs.message = describe(ready)
else
  hs.message = "Waiting for the Ready condition"
end
return hs
