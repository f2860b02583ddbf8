"""The table of one sitting (sitting.sh): per size, each build's median, slowest run and slowest/fastest, and each
Kolo build's median and slowest run over OpenMPI's median. Usage: python3 sitting_table.py DIR"""
import glob
import json
import os
import statistics
import sys

runs = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name, run = os.path.basename(path)[:-5].rsplit("-", 1)
    for line in open(path):
        if line.startswith("{"):
            row = json.loads(line)
            if "bytes" in row and "time_us" in row:
                runs.setdefault(name, {}).setdefault(row["bytes"], []).append(row["time_us"])
builds = [n for n in runs if n != "openmpi"] + (["openmpi"] if "openmpi" in runs else [])
sizes = sorted({b for n in builds for b in runs[n]})


def us(v):
    return "%.2f" % v if v < 10 else "%.1f" % v if v < 1000 else "%.0f" % v


head = ["bytes"] + ["%s median (slowest; slowest/fastest)" % n for n in builds]
head += ["%s/openmpi median (slowest)" % n for n in builds if n != "openmpi" and "openmpi" in runs]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for size in sizes:
    cells, medians = [str(size)], {}
    for n in builds:
        t = runs[n].get(size, [])
        if t:
            medians[n] = (statistics.median(t), max(t))
            cells.append("%s (%s; %.2fx)" % (us(statistics.median(t)), us(max(t)), max(t) / min(t)))
        else:
            cells.append("-")
    for n in builds:
        if n != "openmpi" and "openmpi" in runs:
            if n in medians and "openmpi" in medians:
                m, slowest = medians[n]
                cells.append("%.2f (%.2f)" % (m / medians["openmpi"][0], slowest / medians["openmpi"][0]))
            else:
                cells.append("-")
    print("| " + " | ".join(cells) + " |")
