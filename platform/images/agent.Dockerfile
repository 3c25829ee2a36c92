# The node agent (agent/, package zhisuan_agent), run by platform/agent/daemonset.yaml, which
# passes only arguments: the entrypoint is the agent. Build from the repository root:
#   docker build -f platform/images/agent.Dockerfile -t registry.example.com/zhisuan/agent:0.1.0 .
# NVML comes from the host's driver through the NVIDIA container runtime (runtimeClassName:
# nvidia); nsenter (util-linux, in the base image) reaches the host for allow-listed fixes.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /src
COPY agent/ agent/
RUN pip install --no-cache-dir ./agent && rm -rf /src/agent
EXPOSE 9410
ENTRYPOINT ["zhisuan-agent"]
