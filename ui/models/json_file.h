#pragma once

#include <QJsonDocument>
#include <QString>

namespace h3p::ui {

// Throws h3p::InputError("<file>: <field>: <what>"), the error every ui/ reader of a JSON
// file reports.
[[noreturn]] void failJsonField(const QString& file, const QString& field, const QString& what);

// Reads and parses the JSON file `file`. Throws h3p::InputError("<file>: open: <why>") when it
// cannot be opened and ("<file>: offset <n>: <why>") when it does not parse.
QJsonDocument readJsonFile(const QString& file);

}  // namespace h3p::ui
